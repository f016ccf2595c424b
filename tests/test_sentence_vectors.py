"""The sentence vector and the pair features, written once for arrays and tensors: both kinds give the same
numbers, padding never counts, and the gradient through them matches finite differences."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.autograd import Tensor
from minibert.gradient_check import gradcheck
from minibert.model.sentence_vectors import mean_of_tokens, pair_features


@st.composite
def padded_batches(draw):
    """(B, S, H) float64 token vectors and a mask whose rows are real tokens then padding (at least one)."""
    batch, length, hidden = draw(st.integers(1, 4)), draw(st.integers(1, 6)), draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**31 - 1))
    lengths = [draw(st.integers(1, length)) for _ in range(batch)]
    mask = (np.arange(length)[None, :] < np.array(lengths)[:, None]).astype(np.int64)
    return np.random.default_rng(seed).normal(size=(batch, length, hidden)), mask


@settings(max_examples=40, deadline=None)
@given(padded_batches())
def test_the_mean_is_over_the_real_tokens_alone(batch):
    """Each row's vector is the mean of its real tokens, whatever the padding holds, for arrays and tensors."""
    vectors, mask = batch
    expected = np.array([row[mask_row == 1].mean(axis=0) for row, mask_row in zip(vectors, mask, strict=True)])
    garbage = np.where(mask[:, :, None] == 1, vectors, 1e6)  # what sits under the padding must not matter
    np.testing.assert_allclose(mean_of_tokens(garbage, mask), expected, rtol=1e-12)
    np.testing.assert_allclose(mean_of_tokens(Tensor(garbage), mask).data, expected, rtol=1e-12)


def test_no_mask_means_every_token_and_an_empty_row_gives_zeros():
    vectors = np.arange(12.0).reshape(2, 3, 2)
    np.testing.assert_allclose(mean_of_tokens(vectors), vectors.mean(axis=1))
    np.testing.assert_array_equal(mean_of_tokens(vectors, np.array([[1, 0, 0], [0, 0, 0]])), [[0.0, 1.0], [0.0, 0.0]])


def test_pair_features_by_hand_for_arrays_and_tensors():
    u, v = np.array([[1.0, -2.0]]), np.array([[3.0, 4.0]])
    expected = [[1.0, -2.0, 3.0, 4.0, 2.0, 6.0, 3.0, -8.0]]
    np.testing.assert_array_equal(pair_features(u, v), expected)
    features = pair_features(Tensor(u), Tensor(v))
    assert isinstance(features, Tensor)
    np.testing.assert_array_equal(features.data, expected)


def test_the_gradient_through_the_mean_and_the_pair_features():
    """From token vectors to [u, v, |u - v|, u * v] of two sentences' means, in float64."""
    rng = np.random.default_rng(0)
    tokens = Tensor(rng.normal(size=(4, 3, 5)), requires_grad=True)  # A's two rows, then B's two
    mask = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 1, 0]])

    def features(tokens):
        means = mean_of_tokens(tokens, mask)  # (4, 5)
        return pair_features(means[:2], means[2:])  # (2, 20)

    assert gradcheck(features, tokens)
