"""The head-kind measures of Clark et al. 2019 on hand-made attention maps whose answer is known."""

import numpy as np
import pytest

from minibert.errors import ShapeError
from minibert.viz.head_kinds import (
    KINDS,
    attention_entropy,
    attention_to,
    head_kind_scores,
    head_kinds_table,
    head_labels,
    next_token_attention,
    previous_token_attention,
    strongest_heads,
)

TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]", "it", "slept", "[SEP]"]
S = len(TOKENS)
SEPS, CLS = [4, 7], [0]


def one_hot_rows(columns):
    """An (S, S) map in which row i puts all its attention on column columns[i]."""
    attention = np.zeros((S, S))
    attention[np.arange(S), columns] = 1.0
    return attention


PREVIOUS = one_hot_rows([max(i - 1, 0) for i in range(S)])  # row 0 has no left neighbour: looks at itself
NEXT = one_hot_rows([min(i + 1, S - 1) for i in range(S)])
TO_SEP = one_hot_rows([4 if i < 5 else 7 for i in range(S)])
TO_CLS = one_hot_rows([0] * S)
UNIFORM = np.full((S, S), 1.0 / S)


def test_each_measure_on_its_own_pattern():
    heads = np.stack([PREVIOUS, NEXT, TO_SEP, TO_CLS, UNIFORM])  # (A, S, S)
    # Over the 7 rows that have the neighbour: TO_SEP's rows 3 and 6 happen to look at their next token,
    # TO_CLS's row 1 at its previous one.
    np.testing.assert_allclose(previous_token_attention(heads), [1, 0, 0, 1 / 7, 1 / S])
    np.testing.assert_allclose(next_token_attention(heads), [0, 1, 2 / 7, 0, 1 / S])
    # PREVIOUS: row 5 looks at [SEP] 4; NEXT: row 3 at 4, rows 6 and 7 at 7.
    np.testing.assert_allclose(attention_to(heads, SEPS), [1 / S, 3 / S, 1, 0, 2 / S])
    np.testing.assert_allclose(attention_to(heads, CLS), [2 / S, 0, 0, 1, 1 / S])
    # Entropy: 0 for one-hot rows (0 ln 0 = 0, no NaN), ln S for uniform rows, ln 2 for rows split in half.
    np.testing.assert_allclose(attention_entropy(heads), [0, 0, 0, 0, np.log(S)], atol=1e-12)
    halves = np.full((1, S, S), 0.0)
    halves[0, :, :2] = 0.5
    np.testing.assert_allclose(attention_entropy(halves), [np.log(2)])


def test_scores_find_the_planted_heads_over_two_examples():
    rng = np.random.default_rng(0)

    def noisy_layers():
        # 2 layers x 3 heads of random rows, then plant one head of each kind (broad: uniform rows).
        layers = rng.dirichlet(np.full(S, 0.3), size=(2, 3, S))  # (L, A, S, S), rows sum to 1
        layers[0, 1], layers[0, 2], layers[1, 0] = PREVIOUS, TO_SEP, NEXT
        layers[1, 1], layers[1, 2] = TO_CLS, UNIFORM
        return list(layers)

    scores = head_kind_scores([(TOKENS, noisy_layers()), (TOKENS, noisy_layers())])
    assert set(scores) == set(KINDS) and all(scores[kind].shape == (2, 3) for kind in KINDS)
    planted = {"previous token": (0, 1), "[SEP]": (0, 2), "next token": (1, 0), "[CLS]": (1, 1),
               "broad": (1, 2)}
    for kind, (layer, head) in planted.items():
        assert strongest_heads(scores[kind], top=1)[0][:2] == (layer, head), kind
    assert strongest_heads(scores["previous token"], top=1)[0][2] == pytest.approx(1.0)
    table = head_kinds_table(scores, top=2)
    assert "previous token  L0H1 1.00" in table and "broad           L1H2 2.08" in table


def test_strongest_heads_order_and_ties():
    scores = np.array([[0.1, 0.9], [0.9, 0.5]])
    assert strongest_heads(scores, top=3) == [(0, 1, 0.9), (1, 0, 0.9), (1, 1, 0.5)]


def test_bad_inputs_are_named():
    with pytest.raises(ShapeError, match="do not fit 8 tokens"):
        head_kind_scores([(TOKENS, [np.zeros((2, S, S - 1))])])
    with pytest.raises(ShapeError, match=r"no \[SEP\]"):
        head_kind_scores([(["[CLS]", "a"], [np.full((1, 2, 2), 0.5)])])
    with pytest.raises(ShapeError, match="no examples"):
        head_kind_scores([])


def test_each_pattern_head_is_labelled_with_its_kind_and_a_mixed_head_with_none():
    """The model view's labels: a head is named after the pattern that holds most of its attention, "broad"
    when it spreads evenly, and nothing when no pattern holds half of it and it is not spread."""
    split = 0.3 * PREVIOUS + 0.7 * one_hot_rows([2] * S)  # 0.4 on the left neighbour on average, the rest on "cat"
    layer = np.stack([PREVIOUS, NEXT, TO_SEP, TO_CLS, UNIFORM, split])
    labels = head_labels(head_kind_scores([(TOKENS, [layer])]), S)
    assert labels == [["previous token", "next token", "[SEP]", "[CLS]", "broad", ""]]
