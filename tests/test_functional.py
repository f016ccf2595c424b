"""The neural-network ops of `minibert.functional`, on both backends: gradients against finite differences in
float64, values against formulas written out here independently.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert import Tensor, gradcheck
from minibert import functional as F
from minibert.errors import ShapeError
from minibert.model.losses import cross_entropy
from minibert.nn.embedding import embedding


def leaf(shape, seed=0, scale=1.0):
    return Tensor(np.random.default_rng(seed).standard_normal(shape) * scale, requires_grad=True)


def mask_of_kind(kind, shape, seed=0):
    """The masks the issue names: all ones, partly zero, one-hot (exactly one kept key per row)."""
    rng = np.random.default_rng(seed)
    if kind == "all-ones":
        return np.ones(shape, dtype=bool)
    if kind == "partly-zero":
        mask = rng.random(shape) < 0.6
        mask[..., 0] = True  # keep at least one key per row
        return mask
    keep = rng.integers(0, shape[-1], size=shape[:-1])
    return np.arange(shape[-1]) == keep[..., None]


@given(leading=st.lists(st.integers(1, 3), min_size=1, max_size=3), sizes=st.tuples(st.integers(1, 4),
       st.integers(1, 4)), with_bias=st.booleans(), seed=st.integers(0, 100))
def test_linear_is_x_times_weight_transposed_plus_bias(backend, leading, sizes, with_bias, seed):
    """F.linear(x, W, b) equals x @ W.T + b written with NumPy, for any leading shape of x, with or without
    bias, and its gradients for x, W and b pass the finite-difference check."""
    in_features, out_features = sizes
    x = leaf((*leading, in_features), seed)
    weight = leaf((out_features, in_features), seed + 1)
    bias = leaf((out_features,), seed + 2) if with_bias else None
    expected = x.data @ weight.data.T + (bias.data if with_bias else 0.0)
    np.testing.assert_allclose(F.linear(x, weight, bias).data, expected, rtol=1e-12, atol=1e-12)
    inputs = (x, weight, bias) if with_bias else (x, weight)
    assert gradcheck(lambda x, w, *b: F.linear(x, w, *b), *inputs)


def test_linear_refuses_a_weight_of_the_wrong_width():
    """A weight whose input width differs from x's last axis is a ShapeError naming both widths: checked once,
    by the matmul kernel, which multiplies x's rows by the transposed weight."""
    with pytest.raises(ShapeError, match=r"\(2, 4\) and \(5, 3\).*\(4\).*\(5\)"):
        F.linear(leaf((2, 4)), leaf((3, 5)))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(backend, approximate):
    """GELU's gradient, and its value against x·Φ(x) written with math.erf (or the tanh formula)."""
    x = leaf((3, 5), scale=2.0)
    assert gradcheck(lambda x: F.gelu(x, approximate), x)
    if approximate == "none":
        expected = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.data.ravel()]
    else:
        expected = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in x.data.ravel()]
    np.testing.assert_allclose(F.gelu(x, approximate).data.ravel(), expected, rtol=1e-6, atol=1e-7)


def test_gelu_rejects_unknown_form():
    with pytest.raises(ValueError, match="'sigmoid'"):
        F.gelu(leaf(3), "sigmoid")


@pytest.mark.parametrize("kind", ["all-ones", "partly-zero", "one-hot"])
@pytest.mark.parametrize("mask_shape", [(2, 3, 4, 5), (2, 1, 1, 5), (2, 1, 4, 5)])
def test_softmax_with_masks(backend, kind, mask_shape):
    """Attention-shaped softmax (B, A, S, S) with padding-style (B,1,1,S) and full (B,1,S,S) masks:
    masked keys get exactly probability 0, rows sum to 1, gradients match finite differences."""
    scores = leaf((2, 3, 4, 5))
    mask = mask_of_kind(kind, mask_shape)
    probs = F.softmax(scores, mask=mask).data
    assert np.all(probs[np.broadcast_to(~mask, probs.shape)] == 0)
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-12)
    kept = np.where(np.broadcast_to(mask, scores.shape), np.exp(scores.data), 0)
    np.testing.assert_allclose(probs, kept / kept.sum(-1, keepdims=True), rtol=1e-10)
    assert gradcheck(lambda s: F.softmax(s, mask=mask), scores)


@given(st.integers(0, 2), st.booleans())
def test_softmax_and_log_softmax_on_any_axis(backend, axis, additive):
    """Any axis; an additive float mask works like the boolean one."""
    x = leaf((3, 4, 5))
    shape = (3, 4, 5)
    rows_last = tuple(n for i, n in enumerate(shape) if i != axis) + (shape[axis],)
    bool_mask = np.moveaxis(mask_of_kind("partly-zero", rows_last), -1, axis)  # >= 1 kept entry along `axis`
    mask = np.where(bool_mask, 0.0, -1e9) if additive else bool_mask
    assert gradcheck(lambda x: F.softmax(x, axis=axis, mask=mask), x)
    assert gradcheck(lambda x: F.log_softmax(x, axis=axis), x)
    np.testing.assert_allclose(np.exp(F.log_softmax(x, axis=axis).data), F.softmax(x, axis=axis).data, rtol=1e-12)


def test_softmax_stays_finite_on_extreme_and_fully_masked_rows(backend):
    """Logits at ±1e4 (no overflow: the row max is subtracted) and a row with every key masked (uniform,
    not NaN)."""
    x = Tensor(np.array([[1e4, -1e4, 0.0], [5.0, 6.0, 7.0]], dtype=np.float32), requires_grad=True)
    mask = np.array([[True, True, True], [False, False, False]])
    probs = F.softmax(x, mask=mask)
    assert np.all(np.isfinite(probs.data))
    np.testing.assert_allclose(probs.data[0], [1, 0, 0], atol=1e-6)
    probs.sum().backward()
    assert np.all(np.isfinite(x.grad))


def test_softmax_mask_shape_mismatch_is_named():
    with pytest.raises(ShapeError, match=r"\(2, 7\)"):
        F.softmax(leaf((2, 5)), mask=np.ones((2, 7), dtype=bool))


@given(st.sampled_from([(6,), (2, 6), (2, 3, 6)]))
def test_layer_norm(backend, shape):
    """Fused LayerNorm: gradient w.r.t. x, weight and bias, and the value against the textbook formula."""
    x, weight, bias = leaf(shape, 1), leaf(shape[-1:], 2), leaf(shape[-1:], 3)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, w, b, 1e-12), x, weight, bias)
    mean, var = x.data.mean(-1, keepdims=True), x.data.var(-1, keepdims=True)
    expected = (x.data - mean) / np.sqrt(var + 1e-12) * weight.data + bias.data
    np.testing.assert_allclose(F.layer_norm(x, weight, bias, 1e-12).data, expected, rtol=1e-10, atol=1e-12)


def test_layer_norm_weight_shape_is_checked():
    with pytest.raises(ShapeError, match=r"\(5,\)"):
        F.layer_norm(leaf((2, 5)), leaf((4,)), leaf((4,)))


def test_dropout(backend):
    """Inverted dropout: about p of the units are zeroed, the rest scaled by 1/(1-p) so the mean is kept;
    the same Generator seed gives the same mask; eval mode and p = 0 are the identity."""
    x = Tensor(np.ones((200, 200)), requires_grad=True)
    out = F.dropout(x, 0.25, training=True, rng=np.random.default_rng(7)).data
    dropped = np.mean(out == 0)
    assert abs(dropped - 0.25) < 5 * math.sqrt(0.25 * 0.75 / out.size)  # 5-sigma binomial bound
    np.testing.assert_allclose(out[out != 0], 1 / 0.75)
    again = F.dropout(x, 0.25, training=True, rng=np.random.default_rng(7)).data
    np.testing.assert_array_equal(out, again)
    assert F.dropout(x, 0.25, training=False) is x
    assert F.dropout(x, 0.0, training=True, rng=np.random.default_rng(0)) is x
    assert gradcheck(lambda x: F.dropout(x, 0.5, True, np.random.default_rng(3)), leaf((4, 5)))
    with pytest.raises(ValueError, match="p=1.5"):
        F.dropout(x, 1.5, training=True, rng=np.random.default_rng(0))


def test_embedding_scatter_adds_repeated_ids(backend):
    """Row 1 is looked up three times, so its gradient is the sum of three output gradients."""
    ids = np.array([[1, 1, 0], [1, 3, 3]])
    weight = leaf((5, 4))
    np.testing.assert_array_equal(embedding(ids, weight).data, weight.data[ids])
    assert gradcheck(lambda w: embedding(ids, w), weight)
    with pytest.raises(ShapeError, match="id 5"):
        embedding(np.array([5]), weight)


def reference_nll(logits, targets):
    """-log softmax(logits)[target], one row at a time with math.log: independent of the kernels."""
    rows = logits.reshape(-1, logits.shape[-1])
    return np.array([-(row[t] - row.max() - math.log(np.exp(row - row.max()).sum()))
                     for row, t in zip(rows, targets.ravel(), strict=True)])


def test_cross_entropy_mean(backend):
    logits, targets = leaf((2, 3, 5)), np.array([[0, 4, 2], [1, 1, 3]])
    np.testing.assert_allclose(cross_entropy(logits, targets).item(), reference_nll(logits.data, targets).mean())
    assert gradcheck(lambda z: cross_entropy(z, targets), logits)


def test_cross_entropy_ignore_index(backend):
    """Positions with target == ignore_index are left out of the mean (the -100 convention of HF labels)."""
    logits, targets = leaf((2, 3, 5)), np.array([[0, -100, 2], [-100, 1, 3]])
    keep = targets != -100
    nll = reference_nll(logits.data, np.where(keep, targets, 0))
    np.testing.assert_allclose(cross_entropy(logits, targets, ignore_index=-100).item(), nll[keep.ravel()].mean())
    assert gradcheck(lambda z: cross_entropy(z, targets, ignore_index=-100), logits)


def test_cross_entropy_bert_weighted_mean(backend):
    """BERT's masked-LM loss: sum(w·nll) / (sum(w) + 1e-5); padded prediction slots carry w = 0 and add
    nothing, whatever their target."""
    logits, targets = leaf((2, 4, 6)), np.array([[5, 0, 2, 0], [1, 3, 0, 0]])
    weights = np.array([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    nll = reference_nll(logits.data, targets)
    expected = (weights.ravel() * nll).sum() / (weights.sum() + 1e-5)
    np.testing.assert_allclose(cross_entropy(logits, targets, weights=weights).item(), expected, rtol=1e-12)
    assert gradcheck(lambda z: cross_entropy(z, targets, weights=weights), logits)


def test_cross_entropy_is_finite_at_extreme_logits(backend):
    logits = Tensor(np.array([[1e4, -1e4, 0.0]], dtype=np.float32), requires_grad=True)
    loss = cross_entropy(logits, np.array([1]))
    assert np.isfinite(loss.item()) and loss.item() == pytest.approx(2e4, rel=1e-6)
    loss.backward()
    assert np.all(np.isfinite(logits.grad))


def test_cross_entropy_bad_targets_are_named():
    with pytest.raises(ShapeError, match="target 9"):
        cross_entropy(leaf((2, 5)), np.array([0, 9]))
    with pytest.raises(ShapeError, match=r"\(3,\)"):
        cross_entropy(leaf((2, 5)), np.array([0, 1, 2]))
    with pytest.raises(TypeError, match="integer"):
        cross_entropy(leaf((2, 5)), np.array([0.0, 1.0]))
