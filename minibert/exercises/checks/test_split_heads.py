"""Exercise split_heads (lesson 05a): `MultiHeadSelfAttention.split_heads` in minibert/nn/transformer.py.

The referee is the definition: head a of token s is the slice [a·D, (a+1)·D) of token s's vector, computed
with explicit loops, for odd sizes so that a swapped axis cannot pass by broadcasting.
"""

import numpy as np

from minibert.nn.transformer import MultiHeadSelfAttention


def split(hidden, heads, x):
    return MultiHeadSelfAttention(hidden, heads, 0.0, np.random.default_rng(0)).split_heads(x)


def test_shape_is_batch_heads_tokens_head_size():
    """(B, S, H) = (2, 5, 12) with A = 3 heads: (B, A, S, D) = (2, 3, 5, 4)."""
    assert split(12, 3, np.zeros((2, 5, 12))).shape == (2, 3, 5, 4)


def test_head_a_holds_slice_a_of_every_token():
    """out[b, a, s] is x[b, s, a·D:(a+1)·D], for every batch row, head and token (loops, by definition)."""
    x = np.arange(2 * 5 * 12, dtype=np.float64).reshape(2, 5, 12)
    out = split(12, 3, x)
    for b in range(2):
        for a in range(3):
            for s in range(5):
                np.testing.assert_array_equal(out[b, a, s], x[b, s, 4 * a:4 * a + 4],
                                              err_msg=f"head {a} of token {s} is not slice {a} of that token")


def test_more_heads_than_head_size():
    """A = 4 heads of D = 2 (more heads than numbers per head): still slice a of each token."""
    x = np.random.default_rng(1).standard_normal((1, 3, 8))
    out = split(8, 4, x)
    assert out.shape == (1, 4, 3, 2)
    np.testing.assert_array_equal(out[0, 3, 2], x[0, 2, 6:8])
