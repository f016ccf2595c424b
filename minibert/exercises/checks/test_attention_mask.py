"""Exercise attention_mask (lesson 05): `build_attention_mask` in minibert/model/masks.py.

Row i, column j of a mask says whether query i may attend to key j. BERT: every real key. GPT: every real
key at or left of i. Expected masks are written out by hand or built from their definition with loops.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from minibert import Tensor
from minibert import functional as F
from minibert.model.masks import build_attention_mask, mask_matrix


def test_seed_article_grids():
    """The 7 tokens of `我 喜欢 猫 睡 在 沙发 上`: causal is the lower triangle, bidirectional all ones."""
    causal = mask_matrix(7, "causal")
    assert causal.tolist()[:3] == [[1, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0, 0]]
    assert causal.tolist()[6] == [1] * 7
    assert mask_matrix(7, "bidirectional").tolist() == [[1] * 7] * 7


def test_shapes_broadcast_over_heads():
    """Bidirectional masks are (B, 1, 1, S): the same row for every query; causal ones (B, 1, S, S)."""
    attention_mask = np.ones((2, 5), dtype=np.int64)
    assert build_attention_mask(attention_mask, "bidirectional").shape == (2, 1, 1, 5)
    assert build_attention_mask(attention_mask, "causal").shape == (2, 1, 5, 5)
    assert build_attention_mask(attention_mask).dtype == bool


@given(arrays(np.int64, st.tuples(st.integers(1, 3), st.integers(1, 6)), elements=st.integers(0, 1)))
def test_masks_match_their_definition(attention_mask):
    """For random padding patterns, entry [b, i, j] is `key j is real`, and for causal also `j <= i`."""
    batch, seq_len = attention_mask.shape
    bidirectional = np.broadcast_to(build_attention_mask(attention_mask, "bidirectional"),
                                    (batch, 1, seq_len, seq_len))
    causal = build_attention_mask(attention_mask, "causal")
    for b in range(batch):
        for i in range(seq_len):
            for j in range(seq_len):
                real = attention_mask[b, j] == 1
                assert bidirectional[b, 0, i, j] == real
                assert causal[b, 0, i, j] == (real and j <= i)


def test_the_mask_hides_padding_in_a_softmax():
    """What the mask is for: F.softmax with it gives padded keys (and, causal, the keys to the right) weight
    0. It must be boolean: F.softmax reads a float mask as numbers to add to the scores, so a 0/1 float mask
    would hide nothing."""
    attention_mask = np.array([[1, 1, 1, 0, 0]])
    scores = Tensor(np.zeros((1, 1, 5, 5)))
    for attention in ("bidirectional", "causal"):
        mask = build_attention_mask(attention_mask, attention)
        assert mask.dtype == bool, f"{attention}: the mask is {mask.dtype}; build it of booleans"
        probs = F.softmax(scores, axis=-1, mask=mask).data[0, 0]  # (S, S)
        assert np.all(probs[:, 3:] == 0), f"{attention}: padded keys got weight"
        if attention == "causal":
            assert np.all(probs[np.triu_indices(5, k=1)] == 0), "causal: a key right of its query got weight"
