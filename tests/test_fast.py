"""The speed layer (minibert/fast): each fused kernel against its NumPy reference and against the core's
kernels it stands for, its backward against finite differences in float64; the fused ops; the seeded dropout;
the float32 normal fit; and a whole model, accelerated and plain, on outputs, loss and every gradient."""

import json
import math
import subprocess
import sys

import numba
import numpy as np
import pytest
from helpers import (
    FLOATS,
    assert_gradient,
    assert_matches,
    leading_shapes,
    padded_batch,
    randomize,
    seeds,
    whole_loss_gradcheck,
)
from helpers import odd_config as small_config
from hypothesis import given
from hypothesis import strategies as st
from numba import njit, prange

from minibert import BertForPreTraining, BertModel, Tensor, gradcheck, pretraining_loss
from minibert import functional as F
from minibert.errors import ConfigError, ShapeError
from minibert.fast import accelerate, ops
from minibert.fast.kernels import add_norm, attention_weights, bias_gelu, matmul, normal_cdf_single
from minibert.fast.kernels import seeded_dropout as dropout
from minibert.fast.modules import PrunedEncoder
from minibert.fast.threads import PARALLEL_MIN_ELEMENTS, launch
from minibert.kernels import gelu, layernorm, softmax
from minibert.kernels.dispatch import DtypeError

keeps = st.sampled_from([1.0, 0.9, 0.5])


def add_norm_inputs(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    h, residual, grad_y = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    weight, bias = (rng.standard_normal(shape[-1]).astype(dtype) for _ in range(2))
    return h, residual, weight, bias, grad_y, np.uint64(rng.integers(0, 2**63))


# ---------------------------------------------------------------------------------------------------------
# Add & Norm: LayerNorm(residual + Dropout(h))

@pytest.mark.parametrize("dtype", FLOATS)
@given(shape=leading_shapes, hidden=st.integers(2, 40), keep=keeps, seed=seeds)
def test_add_norm_numba_matches_numpy(dtype, shape, hidden, keep, seed):
    """Forward (y, s, mean, rstd) and backward (grad_h, grad_residual, grad_weight, grad_bias): the Numba
    kernels equal the NumPy references, with dropout (the same elements dropped) and without."""
    h, residual, weight, bias, grad_y, drop_seed = add_norm_inputs(shape + (hidden,), dtype, seed)
    expected = add_norm.add_norm_forward_numpy(h, residual, drop_seed, keep, weight, bias, 1e-5)
    outputs = add_norm.add_norm_forward_numba(h, residual, drop_seed, keep, weight, bias, 1e-5)
    # as in the LayerNorm test: x - mean rounds to a unit of |x|, magnified by rstd (and weight) in y
    _, s, mean, rstd = expected
    scale = float(np.max(np.abs(s)) * np.max(rstd) * max(1.0, np.max(np.abs(weight))))
    for actual, wanted in zip(outputs, expected, strict=True):
        assert_matches(actual, wanted, dtype, max(1.0, scale * float(np.max(np.abs(wanted)))))
    grads = add_norm.add_norm_backward_numba(grad_y, s, weight, mean, rstd, drop_seed, keep)
    expected = add_norm.add_norm_backward_numpy(grad_y, s, weight, mean, rstd, drop_seed, keep)
    scale = float(np.max(np.abs(grad_y)) * np.max(np.abs(weight)) * np.max(rstd) * hidden / keep)
    for actual, wanted in zip(grads, expected, strict=True):
        assert_matches(actual, wanted, dtype, max(1.0, scale, float(np.max(np.abs(wanted)))))


@given(shape=leading_shapes, hidden=st.integers(2, 40), keep=keeps, seed=seeds)
def test_add_norm_is_dropout_then_add_then_layer_norm(backend, shape, hidden, keep, seed):
    """With the seed dropout_forward got, the fused op drops exactly the elements dropout drops, and its
    outputs and gradients are those of dropout, +, layer_norm one after the other."""
    h, residual, weight, bias, grad_y, drop_seed = add_norm_inputs(shape + (hidden,), np.float64, seed)
    dropped, kept = dropout.dropout_forward(h, drop_seed, keep)
    s_plain = residual + dropped
    y_plain, mean_plain, rstd_plain = layernorm.layer_norm_forward(s_plain, weight, bias, 1e-5)
    y, s, mean, rstd = add_norm.add_norm_forward(h, residual, drop_seed, keep, weight, bias, 1e-5)
    np.testing.assert_array_equal(s == residual, (s_plain == residual))  # the same elements dropped
    for fused, plain in ((y, y_plain), (s, s_plain), (mean, mean_plain), (rstd, rstd_plain)):
        np.testing.assert_allclose(fused, plain, rtol=1e-10, atol=1e-12)
    grad_s, grad_weight, grad_bias = layernorm.layer_norm_backward(grad_y, s_plain, weight, mean_plain, rstd_plain)
    plain = (dropout.dropout_backward(grad_s, kept, keep), grad_s, grad_weight, grad_bias)
    fused = add_norm.add_norm_backward(grad_y, s, weight, mean, rstd, drop_seed, keep)
    for fused_grad, plain_grad in zip(fused, plain, strict=True):
        np.testing.assert_allclose(fused_grad, plain_grad, rtol=1e-9, atol=1e-10)


@given(shape=leading_shapes, hidden=st.integers(2, 9), keep=keeps, seed=seeds)
def test_add_norm_backward_is_the_gradient_of_its_forward(backend, shape, hidden, keep, seed):
    """grad_h, grad_residual, grad_weight and grad_bias equal finite differences of y in float64 (the seed is
    fixed, so every nudged forward drops the same elements)."""
    h, residual, weight, bias, grad_y, drop_seed = add_norm_inputs(shape + (hidden,), np.float64, seed)

    def y_of(h=h, residual=residual, weight=weight, bias=bias):  # one nudged copy at a time (batched=False):
        return add_norm.add_norm_forward(h, residual, drop_seed, keep, weight, bias, 1e-5)[0]  # the same draws

    _, s, mean, rstd = add_norm.add_norm_forward(h, residual, drop_seed, keep, weight, bias, 1e-5)
    grad_h, grad_residual, grad_weight, grad_bias = add_norm.add_norm_backward(grad_y, s, weight, mean, rstd,
                                                                              drop_seed, keep)
    assert_gradient(grad_h, lambda v: y_of(h=v), h, grad_y, batched=False)
    assert_gradient(grad_residual, lambda v: y_of(residual=v), residual, grad_y, batched=False)
    assert_gradient(grad_weight, lambda w: y_of(weight=w), weight, grad_y, batched=False)
    assert_gradient(grad_bias, lambda b: y_of(bias=b), bias, grad_y, batched=False)


def test_add_norm_refuses_bad_input():
    """Mismatched shapes, a bad keep, a seed that is not draw_seed's: errors that say what to do."""
    h, residual, weight, bias, _, drop_seed = add_norm_inputs((2, 3, 4), np.float32, 0)
    with pytest.raises(ShapeError, match="residual"):
        add_norm.add_norm_forward(h, residual[:, :2], drop_seed, 0.9, weight, bias, 1e-12)
    with pytest.raises(ShapeError, match="weight"):
        add_norm.add_norm_forward(h, residual, drop_seed, 0.9, weight[:3], bias, 1e-12)
    with pytest.raises(ValueError, match="keep=0"):
        add_norm.add_norm_forward(h, residual, drop_seed, 0.0, weight, bias, 1e-12)
    with pytest.raises(DtypeError, match="draw_seed"):
        add_norm.add_norm_forward(h, residual, 7, 0.9, weight, bias, 1e-12)
    with pytest.raises(ValueError, match="rng"):
        ops.dropout_add_layer_norm(Tensor(h), Tensor(residual), Tensor(weight), Tensor(bias), 1e-12, 0.1, True)


def test_dropout_add_layer_norm_op(backend):
    """dropout_add_layer_norm passes the finite-difference check for all four inputs with dropout on,
    equals seeded dropout, add and F.layer_norm given the same Generator, and in eval mode draws nothing and
    drops nothing."""
    def leaf(shape, seed):
        return Tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)

    h, residual, weight, bias = leaf((2, 3, 5), 1), leaf((2, 3, 5), 2), leaf((5,), 3), leaf((5,), 4)
    assert gradcheck(lambda *args: ops.dropout_add_layer_norm(*args, 1e-12, 0.3, True, np.random.default_rng(5)),
                     h, residual, weight, bias)
    fused = ops.dropout_add_layer_norm(h, residual, weight, bias, 1e-12, 0.3, True, np.random.default_rng(5))
    plain = F.layer_norm(residual + ops.seeded_dropout(h, 0.3, True, np.random.default_rng(5)), weight, bias, 1e-12)
    np.testing.assert_allclose(fused.data, plain.data, rtol=1e-12)
    untouched = np.random.default_rng(5)
    evaluated = ops.dropout_add_layer_norm(h, residual, weight, bias, 1e-12, 0.3, False, untouched)
    np.testing.assert_allclose(evaluated.data, F.layer_norm(residual + h, weight, bias, 1e-12).data, rtol=1e-12)
    assert untouched.integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)


# ---------------------------------------------------------------------------------------------------------
# bias + GELU: gelu(x + bias)

@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", FLOATS)
@given(shape=leading_shapes, cols=st.integers(1, 40), seed=seeds)
def test_bias_gelu_numba_matches_numpy_and_the_plain_ops(dtype, approximate, shape, cols, seed):
    """(y, slope): each backend's kernel equals the core's GELU and its derivative at x + bias (float32's
    exact form to the fit's 4.5e-7 relative, within the float32 tolerance); (grad_x, grad_bias): both equal
    grad_y * slope and its sum over rows."""
    rng = np.random.default_rng(seed)
    x, grad_y = (rng.standard_normal(shape + (cols,)).astype(dtype) * 3 for _ in range(2))
    bias = rng.standard_normal(cols).astype(dtype)
    z = x + bias
    wanted = (gelu.gelu_forward_numpy(z, approximate), gelu.gelu_backward_numpy(np.ones_like(z), z, approximate))
    scale = max(1.0, float(np.max(np.abs(z))))  # as test_kernels.py's GELU tests: per unit of the largest |z|
    for kernel in (bias_gelu.bias_gelu_with_slope_numba, bias_gelu.bias_gelu_with_slope_numpy):
        for actual, expected in zip(kernel(x, bias, approximate), wanted, strict=True):
            assert_matches(actual, expected, dtype, scale)
    slope = wanted[1]
    grad_x = grad_y * slope
    wanted = (grad_x, grad_x.reshape(-1, cols).sum(axis=0, dtype=np.float64).astype(dtype))
    rows = grad_x.size // cols
    for kernel in (bias_gelu.bias_gelu_backward_numba, bias_gelu.bias_gelu_backward_numpy):
        actual = kernel(grad_y, slope)
        assert_matches(actual[0], wanted[0], dtype)
        # a sum of `rows` terms: float32's rounding grows with their count and size
        assert_matches(actual[1], wanted[1], dtype, max(1.0, rows * float(np.max(np.abs(grad_x)))))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_bias_gelu_op(backend, approximate):
    """bias_gelu passes the finite-difference check for x and bias, and equals F.gelu(x + bias), with and
    without gradients."""
    def leaf(shape, seed):
        return Tensor(np.random.default_rng(seed).standard_normal(shape) * 2, requires_grad=True)

    x, bias = leaf((2, 3, 5), 1), leaf((5,), 2)
    assert gradcheck(lambda x, bias: ops.bias_gelu(x, bias, approximate), x, bias)
    np.testing.assert_allclose(ops.bias_gelu(x, bias, approximate).data, F.gelu(x + bias, approximate).data,
                               rtol=1e-14)
    constant = Tensor(x.data)
    np.testing.assert_allclose(ops.bias_gelu(constant, Tensor(bias.data), approximate).data,
                               F.gelu(x + bias, approximate).data, rtol=1e-14)


def test_bias_gelu_refuses_bad_input():
    """A bias that does not match x's last axis, an unknown form: errors that say what to do."""
    x, bias = Tensor(np.ones((2, 4), np.float32)), Tensor(np.ones(4, np.float32))
    with pytest.raises(ShapeError, match=r"\(4,\)"):
        ops.bias_gelu(x, Tensor(np.ones(3, np.float32)))
    with pytest.raises(ShapeError, match="bias"):
        bias_gelu.bias_gelu_with_slope(np.ones((2, 4)), np.ones(3))
    with pytest.raises(ValueError, match="erf"):
        ops.bias_gelu(x, bias, "exact")
    with pytest.raises(ShapeError, match="grad_y"):
        bias_gelu.bias_gelu_backward(np.ones((2, 3)), np.ones((2, 4)))


# ---------------------------------------------------------------------------------------------------------
# attention weights: dropout(softmax(scores * scale + mask)), and the whole attention op

def attention_weights_inputs(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    scores, grad_dropped = (rng.standard_normal(shape).astype(dtype) * 3 for _ in range(2))
    padded = rng.random(shape[:1] + (1,) * (len(shape) - 2) + shape[-1:]) < 0.3
    padded[..., 0] = False  # every row keeps a key
    mask = np.where(padded, np.finfo(dtype).min, 0).astype(dtype)
    return scores, mask, grad_dropped, np.uint64(rng.integers(0, 2**63))


@pytest.mark.parametrize("dtype", FLOATS)
@given(shape=leading_shapes, cols=st.integers(1, 40), keep=keeps, scale=st.sampled_from([1.0, 0.125, 0.3]),
       seed=seeds)
def test_attention_weights_numba_matches_numpy_and_the_plain_kernels(dtype, shape, cols, keep, scale, seed):
    """(probs, dropped) and grad_scores: the Numba kernels equal the NumPy references (with keep = 1 the
    dropped weights are the weights, not a copy); and the same seed drops the same elements as softmax then
    dropout_forward, with the same values."""
    scores, mask, grad_dropped, drop_seed = attention_weights_inputs(shape + (cols,), dtype, seed)
    expected = attention_weights.attention_weights_forward_numpy(scores, mask, scale, drop_seed, keep)
    actual = attention_weights.attention_weights_forward_numba(scores, mask, scale, drop_seed, keep)
    for fused, wanted in zip(actual, expected, strict=True):
        assert_matches(fused, wanted, dtype, 1.0 / keep)
    assert np.shares_memory(actual[1], actual[0]) == (keep == 1.0)  # nothing dropped: no copy of the weights
    probs = softmax.softmax_forward(scores * dtype(scale), mask)
    dropped, _ = dropout.dropout_forward(probs, drop_seed, keep)
    np.testing.assert_array_equal(actual[1] == 0, dropped == 0)  # the same elements dropped
    assert_matches(actual[0], probs, dtype)
    assert_matches(actual[1], dropped, dtype, 1.0 / keep)
    grads = [kernel(grad_dropped, expected[0], scale, drop_seed, keep) for kernel in
             (attention_weights.attention_weights_backward_numba, attention_weights.attention_weights_backward_numpy)]
    assert_matches(grads[0], grads[1], dtype, float(np.max(np.abs(grad_dropped))) * cols / keep)


@given(shape=leading_shapes, cols=st.integers(1, 9), keep=keeps, seed=seeds)
def test_attention_weights_backward_is_the_gradient_of_its_forward(backend, shape, cols, keep, seed):
    """grad_scores equals finite differences of the dropped weights in float64, the seed fixed."""
    scores, mask, grad_dropped, drop_seed = attention_weights_inputs(shape + (cols,), np.float64, seed)
    _, dropped = attention_weights.attention_weights_forward(scores, mask, 0.3, drop_seed, keep)
    probs = attention_weights.attention_weights_forward(scores, mask, 0.3, drop_seed, keep)[0]
    grad_scores = attention_weights.attention_weights_backward(grad_dropped, probs, 0.3, drop_seed, keep)
    assert_gradient(grad_scores, lambda v: attention_weights.attention_weights_forward(v, mask, 0.3, drop_seed,
                                                                                       keep)[1],
                    scores, grad_dropped, batched=False)


@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal"])
def test_fused_self_attention_equals_the_core_layer(backend, mask_kind):
    """MultiHeadSelfAttention and its fused twin, in training mode without dropout (the two draw dropout from
    different streams): the same context, weights and gradients for x and every parameter; and
    self_attention with dropout passes the finite-difference check (its draws replayed from its seed)."""
    from minibert.fast.modules import FusedSelfAttention
    from minibert.nn.transformer import MultiHeadSelfAttention

    x = np.random.default_rng(1).standard_normal((2, 5, 8))
    keep = np.ones((2, 1, 5, 5), dtype=bool) if mask_kind == "causal" else np.ones((2, 1, 1, 5), dtype=bool)
    keep[1, ..., 4] = False
    if mask_kind == "causal":
        keep &= np.tri(5, dtype=bool)
    keep = None if mask_kind == "none" else keep
    results = []
    for accelerated in (True, False):
        layer = MultiHeadSelfAttention(8, 2, 0.0, np.random.default_rng(0), std=0.5).to(np.float64).train()
        layer = FusedSelfAttention(layer) if accelerated else layer
        inputs = Tensor(x, requires_grad=True)
        context, probs = layer(inputs, keep)
        (context * np.arange(context.size).reshape(context.shape)).sum().backward()
        results.append([context.data, probs.data, inputs.grad] + [p.grad for p in layer.parameters()])
    for fused, plain in zip(*results, strict=True):
        np.testing.assert_allclose(fused, plain, rtol=1e-10, atol=1e-12)
    qkv = Tensor(np.random.default_rng(2).standard_normal((2, 5, 24)), requires_grad=True)
    assert gradcheck(lambda qkv: ops.self_attention(qkv, 2, keep, 0.3, True, np.random.default_rng(3))[0], qkv)


def test_self_attention_refuses_bad_input():
    """qkv that is not (B, S, 3H) for the heads, a mask of the wrong shape: errors that say what to do."""
    with pytest.raises(ShapeError, match="3H"):
        ops.self_attention(Tensor(np.ones((2, 5, 8))), 2, None, 0.0, False)
    with pytest.raises(ShapeError, match="mask"):
        ops.self_attention(Tensor(np.ones((2, 5, 12))), 2, np.ones((2, 1, 1, 4), bool), 0.0, False)


# ---------------------------------------------------------------------------------------------------------
# seeded dropout: the speed layer's generator

def test_dropout_draws_are_splitmix64():
    """The draws come from SplitMix64: its published first outputs for seed 1234567 (Rosetta Code,
    "Pseudo-random numbers/Splitmix64"), and u = the top 53 bits of each over 2**53."""
    published = [6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431,
                 16408922859458223821]
    assert [int(v) for v in dropout.splitmix64_numpy(np.uint64(1234567), 5)] == published
    assert list(dropout.uniforms_numpy(np.uint64(1234567), 5)) == [(n >> 11) / 2**53 for n in published]


@pytest.mark.parametrize("dtype", FLOATS)
@given(shape=leading_shapes, p=st.sampled_from([0.0, 0.1, 0.5, 0.9]), seed=seeds)
def test_dropout_numba_equals_numpy_and_the_plain_formula(dtype, shape, p, seed):
    """Both backends give the bits of x * ((u < keep) / keep) for the draws u of the seed, with a -0.0, an
    inf and a NaN among the inputs; the backward is the same scale applied to the gradient; `kept` marks
    exactly those draws."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    x.flat[0] = [-0.0, np.inf, np.nan][seed % 3]
    call_seed = dropout.draw_seed(rng)
    keep = 1.0 - p
    chosen = (dropout.uniforms_numpy(call_seed, x.size) < keep).reshape(shape)
    scale = chosen.astype(dtype) / np.asarray(keep, dtype)
    grad_y = rng.standard_normal(shape).astype(dtype)
    for forward, backward in ((dropout.dropout_forward_numpy, dropout.dropout_backward_numpy),
                              (dropout.dropout_forward_numba, dropout.dropout_backward_numba)):
        with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as intended
            y, kept = forward(x, call_seed, keep)
            expected = x * scale
        assert y.dtype == dtype and kept.dtype == bool
        np.testing.assert_array_equal(kept, chosen)
        np.testing.assert_array_equal(y, expected)
        np.testing.assert_array_equal(np.signbit(y), np.signbit(expected))
        np.testing.assert_array_equal(backward(grad_y, kept, keep), grad_y * scale)


@given(keep=st.floats(1e-6, 1.0), seed=seeds)
def test_dropout_kernel_threshold_is_exactly_u_below_keep(keep, seed):
    """The kernel compares integers (the top 53 bits against ceil(keep * 2**53)); that is exactly u < keep,
    keep = 1 included, for any keep: u = 1 - 2**-53 (the largest draw) and the draws just around keep."""
    below_keep = math.floor(keep * 2**53)  # the integer at or just below keep * 2**53
    _, threshold = dropout.keep_factors(keep, np.float64)
    draws = [m for m in (2**53 - 1, below_keep - 1, below_keep, below_keep + 1) if 0 <= m < 2**53]
    for m in draws:
        assert (m < int(threshold)) == (m / 2**53 < keep), (m, keep)


def test_dropout_keeps_each_element_with_probability_keep():
    """Over a million draws the kept share is keep within 5 standard deviations, for p = 0.1 and 0.5;
    neighbouring elements are both kept as often as independent draws would be (keep²), and two seeds
    drawn one after the other agree on an element as often as independent draws would (keep² + p²)."""
    rng = np.random.default_rng(0)
    x = np.ones(1_000_000, np.float32)
    for keep in (0.9, 0.5):
        tolerance = 5 * np.sqrt(keep * (1 - keep) / x.size)
        _, kept = dropout.dropout_forward(x, dropout.draw_seed(rng), keep)
        _, kept_next = dropout.dropout_forward(x, dropout.draw_seed(rng), keep)
        assert abs(kept.mean() - keep) < tolerance
        assert abs((kept[:-1] & kept[1:]).mean() - keep**2) < 2 * tolerance
        assert abs((kept == kept_next).mean() - (keep**2 + (1 - keep) ** 2)) < 2 * tolerance


def test_dropout_refuses_bad_keep_seeds_and_shapes():
    """keep outside (0, 1], a seed that is not a uint64, and a mask of another shape are refused, by name."""
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="keep=0"):
        dropout.dropout_forward(x, np.uint64(1), 0.0)
    with pytest.raises(DtypeError, match="draw_seed"):
        dropout.dropout_forward(x, 1.5, 0.9)
    with pytest.raises(ShapeError, match="kept"):
        dropout.dropout_backward(x, np.ones((3,), bool), 0.9)


# ---------------------------------------------------------------------------------------------------------
# The float32 normal fit behind the fused exact GELU (normal_cdf_single.py)

def _mills_polynomial_target(t):
    """P(t) = erfc(z) exp(z²) / t with t = 1 / (1 + z/2): what normal_cdf_single.MILLS_FIT approximates."""
    z = 2.0 * (1.0 / t - 1.0)
    if z < 25.0:
        return math.erfc(z) * math.exp(z * z) / t
    # erfc(z) would underflow: its asymptotic series, whose next term is below 1e-11 here
    series = 1 - 1 / (2 * z**2) + 3 / (4 * z**4) - 15 / (8 * z**6) + 105 / (16 * z**8)
    return series / (z * math.sqrt(math.pi) * t)


def test_float32_normal_fit_is_the_chebyshev_fit_of_erfc():
    """MILLS_FIT is what normal_cdf_single.py says it is: refitting P(t) from math.erfc (least squares on
    Chebyshev polynomials at 4000 Chebyshev points of [0, 1], degree 10, then powers of t) gives the same
    coefficients, and the polynomial is within 1.2e-8 relative of P on a fine grid it was not fitted on."""
    nodes = (np.cos(np.pi * (np.arange(4000) + 0.5) / 4000) + 1) / 2
    fit = np.polynomial.Chebyshev.fit(nodes, [_mills_polynomial_target(t) for t in nodes], 10, domain=[0, 1])
    np.testing.assert_allclose(fit.convert(kind=np.polynomial.Polynomial).coef[::-1], normal_cdf_single.MILLS_FIT,
                               rtol=0, atol=1e-9)
    grid = np.linspace(1e-6, 1.0, 20011)
    target = np.array([_mills_polynomial_target(t) for t in grid])
    assert np.max(np.abs(normal_cdf_single.horner(normal_cdf_single.MILLS_FIT, grid) / target - 1)) < 1.2e-8




def test_the_float32_fused_gelu_keeps_float32_precision():
    """On float32 arrays the fused exact GELU takes the single-precision fit of erfc, in float32 arithmetic:
    its forward and derivative are within 4.5e-7 relative of x Phi(x) and Phi(x) + x phi(x) from math.erfc
    (a float32 ulp is 6e-8 to 1.2e-7: up to about four ulps), far out in the left tail too, where 1 + erf(x)
    would cancel to nothing. Enough points for the kernels' threaded path. Prints its largest error against
    math.erf, as the one approximation the speed layer keeps."""
    x = np.linspace(-12.0, 12.0, PARALLEL_MIN_ELEMENTS + 1).astype(np.float32)
    wide = x.astype(np.float64)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in wide])
    pdf = np.exp(-0.5 * wide * wide) / math.sqrt(2 * math.pi)
    y, slope = bias_gelu.bias_gelu_with_slope_numba(x[None], np.zeros_like(x), "none")
    np.testing.assert_allclose(y[0], wide * cdf, rtol=4.5e-7, atol=1e-37)
    # The derivative is a sum of two terms that cancel near x = -0.75, so its error is measured against
    # the size of the terms rather than of their sum.
    error = np.abs(slope[0] - (cdf + wide * pdf))
    assert np.all(error <= 4.5e-7 * (cdf + np.abs(wide * pdf)) + 1e-37), error.max()
    fitted_cdf = np.array([normal_cdf_single.normal_cdf_pdf_single(v)[0] for v in x[::64]], np.float64)
    exact_cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in wide[::64]])
    largest = np.max(np.abs(fitted_cdf - exact_cdf))
    print(f"float32 fit of Phi: largest absolute error against math.erf on [-12, 12]: {largest:.2e}")
    assert largest < 2.4e-7  # two float32 ulps of 1, where Phi is near 1


# ---------------------------------------------------------------------------------------------------------
# A whole model, accelerated and plain







POSITIONS = np.array([[2, 3, 6, 3], [1, 4, 0, 0], [1, 0, 0, 0]])  # a repeated position, padding slots
LABELS = np.array([[4, 7, 1, 7], [9, 2, 0, 0], [12, 0, 0, 0]])
WEIGHTS = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])


def step_numbers(model, dtype):
    """(sequence_output, mlm_logits, nsp_logits, loss, {name: gradient}) of one step on the padded batch."""
    ids, types, mask = padded_batch()
    output = model(ids, types, mask, masked_positions=POSITIONS)
    loss = pretraining_loss(output, LABELS, WEIGHTS, np.array([0, 1, 1]))[0]
    model.zero_grad()
    loss.backward()
    gradients = {name: parameter.grad.copy() for name, parameter in model.named_parameters()}
    return output.sequence_output.data, output.mlm_logits.data, output.nsp_logits.data, loss.item(), gradients


@pytest.mark.parametrize("attention", ["bidirectional", "causal"])
@pytest.mark.parametrize("prune", [False, True])
def test_an_accelerated_model_equals_the_core(backend, attention, prune):
    """A float32 BertForPreTraining and the same weights accelerated (with and without the pruned last
    layer), in training mode without dropout: the logits, the loss and every parameter's gradient agree
    within float32 rounding (rtol 1e-4; atol 1e-5 of each array's largest value, and of the largest gradient
    for the gradients: the keys' bias gets only rounding noise, its true gradient is 0); both models'
    sequence_output hold the rows the heads read, [CLS] and the masked positions, (B, 1 + P, H)."""
    config = small_config(attention=attention, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    core = step_numbers(randomize(BertForPreTraining(config)).train(), np.float32)
    model = accelerate(randomize(BertForPreTraining(config)).train(), prune_last_layer=prune)
    fast = step_numbers(model, np.float32)
    assert core[0].shape == fast[0].shape == (3, 5, 12)
    for core_array, fast_array in zip(core[:3], fast[:3], strict=True):
        np.testing.assert_allclose(fast_array, core_array, rtol=1e-4, atol=1e-5 * np.abs(core_array).max())
    assert fast[3] == pytest.approx(core[3], rel=1e-5)
    largest = max(np.abs(gradient).max() for gradient in core[4].values())
    for name, gradient in core[4].items():
        np.testing.assert_allclose(fast[4][name], gradient, rtol=1e-4, atol=1e-5 * largest, err_msg=name)


@pytest.mark.parametrize("accelerated", [False, True])
@pytest.mark.parametrize("attention", ["bidirectional", "causal"])
def test_pruning_the_last_layer_changes_no_number(backend, accelerated, attention):
    """The pruned last layer (PrunedEncoder), on the core's layers or the fused ones, in float64: the same
    vectors at [CLS] and the masked positions, logits, loss and gradient for every parameter as the full
    model (every row computed, then gathered), to rounding, on a padded batch with a repeated position and
    zero-weight slots; and the last layer's attention weights are the full ones' rows [CLS] and masked."""
    config = small_config(attention=attention, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = randomize(BertForPreTraining(config).to(np.float64)).train()
    if accelerated:
        accelerate(model)
    ids, types, mask = padded_batch()
    full_attentions = model(ids, types, mask, POSITIONS, output_attentions=True).attentions
    full = step_numbers(model, np.float64)
    model.bert.encoder = PrunedEncoder(model.bert.encoder)
    pruned_attentions = model(ids, types, mask, POSITIONS, output_attentions=True).attentions
    pruned = step_numbers(model, np.float64)
    rows = np.concatenate([np.zeros((3, 1), dtype=int), POSITIONS], axis=1)
    np.testing.assert_array_equal(pruned_attentions[0], full_attentions[0])
    assert pruned_attentions[-1].shape == (3, 3, 5, 7)  # (B, A, 1 + P, S)
    np.testing.assert_allclose(pruned_attentions[-1], np.take_along_axis(full_attentions[-1],
                                                                         rows[:, None, :, None], axis=2), atol=1e-12)
    assert pruned[0].shape == (3, 5, 12)
    np.testing.assert_allclose(pruned[0], full[0], atol=1e-12)
    np.testing.assert_allclose(pruned[1], full[1], atol=1e-12)
    np.testing.assert_allclose(pruned[2], full[2], atol=1e-12)
    assert pruned[3] == pytest.approx(full[3], abs=1e-12)
    for name, gradient in full[4].items():
        np.testing.assert_allclose(pruned[4][name], gradient, atol=1e-11, err_msg=name)


def test_pruning_asks_for_a_pretraining_model():
    """Only a BertForPreTraining's heads read just [CLS] and the masked positions: another model is refused."""
    with pytest.raises(ConfigError, match="BertForPreTraining"):
        accelerate(BertModel(small_config()), prune_last_layer=True)


def test_the_pruned_encoder_is_swapped_in_like_every_twin():
    """accelerate(prune_last_layer=True) swaps the encoder for PrunedEncoder as it swaps the other twins (the
    same submodules, the very same parameters) and leaves every forward method the class's own."""
    model = randomize(BertForPreTraining(small_config()))
    names, arrays = zip(*model.state_dict().items(), strict=True)
    layers = list(model.bert.encoder.layer)
    accelerate(model, prune_last_layer=True)
    assert type(model.bert.encoder) is PrunedEncoder
    assert [id(layer) for layer in model.bert.encoder.layer] == [id(layer) for layer in layers]
    assert tuple(model.state_dict()) == names
    assert all(model.state_dict()[name] is array for name, array in zip(names, arrays, strict=True))
    assert all("forward" not in vars(module) for _, module in model.named_modules())


def test_whole_pretraining_loss_gradcheck_accelerated(backend):
    """d(MLM + NSP loss)/d(every parameter tensor) of the accelerated model with the pruned last layer,
    against finite differences in float64, in training mode (dropout on in every fused op, the seeds
    replayed for every evaluation), on both backends. Large tensors are sampled (25 entries each)."""
    config = small_config(vocab_size=13, hidden_size=8, num_attention_heads=2, intermediate_size=6,
                          max_position_embeddings=6)
    model = accelerate(randomize(BertForPreTraining(config, seed=0).to(np.float64)).train(),
                       prune_last_layer=True)
    assert {type(module).__name__ for _, module in model.named_modules()} >= {
        "FusedSelfAttention", "FusedFeedForward", "FusedSublayerOutput", "FusedPredictionTransform", "SeededDropout"}
    assert whole_loss_gradcheck(model)


def test_accelerate_keeps_the_names_the_weights_and_the_checkpoint(tmp_path):
    """The accelerated model has the same parameter names and the very same arrays, so its state_dict and the
    checkpoint it saves are the core model's; a checkpoint of either loads into the other."""
    config = small_config()
    core = randomize(BertForPreTraining(config))
    names, arrays = zip(*core.state_dict().items(), strict=True)
    model = accelerate(core, prune_last_layer=True)
    assert tuple(model.state_dict()) == names
    assert all(model.state_dict()[name] is array for name, array in zip(names, arrays, strict=True))
    model.save_pretrained(tmp_path / "saved")
    loaded = BertForPreTraining.from_pretrained(tmp_path / "saved")
    for name, array in loaded.state_dict().items():
        np.testing.assert_array_equal(array, core.state_dict()[name])


def test_an_accelerated_classifier_equals_the_core(backend):
    """A fine-tuning model (BertForSequenceClassification) accelerated: the same logits and gradients."""
    from minibert.finetune.heads import BertForSequenceClassification

    config = small_config(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    ids, types, mask = padded_batch()
    results = []
    for accelerated in (False, True):
        model = randomize(BertForSequenceClassification(config, num_labels=3).train())
        model = accelerate(model) if accelerated else model
        logits = model(ids, types, mask)
        (logits * np.arange(logits.size, dtype=np.float32).reshape(logits.shape)).sum().backward()
        results.append([logits.data] + [parameter.grad for parameter in model.parameters()])
    largest = max(np.abs(array).max() for array in results[0][1:])  # the keys' bias: rounding noise only
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-4, atol=1e-5 * np.abs(results[0][0]).max())
    for fast, core in zip(results[1][1:], results[0][1:], strict=True):
        np.testing.assert_allclose(fast, core, rtol=1e-4, atol=1e-5 * largest)


CORE_OPS = {"SoftmaxOp", "DropoutOp", "LayerNormOp", "GELUOp"}
FUSED_OPS = {"SelfAttentionOp", "BiasGELUOp", "AddNormOp", "SeededDropoutOp", "SharedLinearOp"}  # fast/ops.py
CORE_PRODUCTS = {"LinearOp", "MatMul"}  # products that would run whole on BLAS's one thread inside the plan

# In a fresh interpreter: the op of every node of the graph of a pretraining step, recorded before backward,
# of a model as built (argv[1] "core") or accelerated ("fast").
GRAPH_OPS = """
import json, sys
import numpy as np
from minibert import BertConfig, BertForPreTraining, fast, pretraining_loss
model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=64), seed=0).train()
if sys.argv[1] == "fast":
    fast.accelerate(model)
ids = np.random.default_rng(0).integers(5, 64, size=(2, 8))
output = model(ids, np.zeros_like(ids), np.ones_like(ids), masked_positions=np.array([[1, 2], [3, 4]]))
loss = pretraining_loss(output, np.ones((2, 2), int), np.ones((2, 2)), np.array([0, 1]))[0]
ops, stack, seen = set(), [loss], set()
while stack:
    node = stack.pop()
    if id(node) in seen or node._function is None:
        continue
    seen.add(id(node))
    ops.add(node._function.name)
    stack.extend(node._function.inputs)
print(json.dumps(sorted(ops)))
"""


def graph_ops(kind):
    done = subprocess.run([sys.executable, "-c", GRAPH_OPS, kind], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


def test_the_core_records_its_own_ops_and_accelerate_the_fused_ones():
    """What a student steps through is what runs: a model as built records softmax, dropout, LayerNorm and
    GELU and none of the fused ops; accelerated, its layers record the fused ops instead, and every product
    (each Linear, the attention's, the MLM decoder) is the speed layer's, so none runs whole on one thread
    inside the process plan."""
    core, fast = graph_ops("core"), graph_ops("fast")
    assert CORE_OPS <= core and not core & FUSED_OPS
    assert FUSED_OPS <= fast and "SoftmaxOp" not in fast and not fast & CORE_PRODUCTS


# ---------------------------------------------------------------------------------------------------------
# Products and threads: the speed layer's matmuls and its small-kernel rule

def test_the_speed_layer_matmuls_write_into_out_and_check_it(rng):
    """With out=, matmul_forward and matmul_pair write the products there (a transposed view included); an
    out of the wrong shape or dtype is refused with both shapes named, and operands that do not fit with the
    core kernel's message."""
    a, b = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 5, 6))
    out = np.zeros((3, 6, 4)).swapaxes(-1, -2)
    assert matmul.matmul_forward(a, b, out=out) is out
    first, second = np.zeros((3, 4, 6)), np.zeros((3, 5, 5))
    matmul.matmul_pair(a, b, a.swapaxes(-1, -2), a, out1=first, out2=second)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    np.testing.assert_allclose(first, a @ b, rtol=1e-12)
    np.testing.assert_allclose(second, a.swapaxes(-1, -2) @ a, rtol=1e-12)
    with pytest.raises(ShapeError, match=r"\(3, 4, 6\)"):
        matmul.matmul_forward(a, b, out=np.zeros((3, 6, 4)))
    with pytest.raises(ShapeError, match="float32"):
        matmul.matmul_pair(a, b, a, a.swapaxes(-1, -2), out1=np.zeros((3, 4, 6), np.float32))
    with pytest.raises(ShapeError, match=r"\(3, 4, 5\) and \(3, 4, 6\)"):
        matmul.matmul_forward(a, a @ b)


@njit(parallel=True, cache=True)
def _thread_ids(size):
    ids = np.zeros(size, dtype=np.int64)
    for i in prange(size):
        ids[i] = numba.get_thread_id()
    return ids


def test_launch_runs_small_work_on_one_thread_and_restores_the_count():
    """Below PARALLEL_MIN_ELEMENTS every iteration of a prange loop runs on thread 0; the thread count is the
    same afterwards, also when the kernel raised."""
    before = numba.get_num_threads()
    assert set(launch(_thread_ids, 100, 100)) == {0}
    assert numba.get_num_threads() == before

    def failing(size):
        raise RuntimeError("kernel failed")

    with pytest.raises(RuntimeError):
        launch(failing, 10, 10)
    assert numba.get_num_threads() == before
    np.testing.assert_array_equal(launch(_thread_ids, PARALLEL_MIN_ELEMENTS, PARALLEL_MIN_ELEMENTS) >= 0, True)
