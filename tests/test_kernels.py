"""The kernel layer: every Numba kernel against its NumPy reference, every backward against finite
differences of its own forward, and the backend switch.

Tolerances, and why:
- float32, Numba vs NumPy: rtol 1e-5, atol 1e-6 x the largest magnitude involved. Both round to float32
  after every few operations (float32's epsilon is 1.2e-7); the Numba kernels sum in float64 and NumPy
  pairwise in float32, so they differ by a few units in the last place, never more.
- float64, Numba vs NumPy: rtol 1e-12, atol 1e-13 x the largest magnitude (same algorithms, a few ulp apart).
  The exact GELU included: both backends use the standard library's math.erf.
- Finite differences: central, step 1e-6, in float64: truncation error ~1e-12, rounding ~1e-10.
- matmul in float32 sums K products in float32, like BLAS: error grows with K, atol 1e-6 * K * scale.
"""

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import FLOATS, TOLERANCE, assert_gradient, assert_matches, last_sizes, leading_shapes, seeds
from hypothesis import example, given
from hypothesis import strategies as st
from numba import njit, prange

from minibert.errors import ConfigError, ShapeError
from minibert.kernels import cross_entropy, gelu, layernorm, scatter, simd, softmax
from minibert.kernels.dispatch import DtypeError, check_matmul, get_backend, set_backend, use_backend

# ---------------------------------------------------------------------------------------------------------
# softmax and log-softmax

MASK_KINDS = ["none", "zeros", "partly masked", "one-hot keep", "fully masked rows"]


def make_mask(kind, x_shape, mask_shape, dtype, rng, drop):
    """An additive mask of `mask_shape` (broadcastable to x_shape): 0 keeps, `drop` masks."""
    if kind == "none":
        return None
    if kind == "zeros":
        return np.zeros(mask_shape, dtype=dtype)
    if kind == "partly masked":
        dropped = rng.random(mask_shape) < 0.4
    elif kind == "one-hot keep":
        keep = rng.integers(0, x_shape[-1], size=mask_shape[:-1])
        # a mask that broadcasts along the last axis (size 1 there) keeps everything
        dropped = (np.arange(mask_shape[-1]) != keep[..., None]) & (mask_shape[-1] > 1)
    else:
        dropped = np.ones(mask_shape, dtype=bool)
    return np.where(dropped, drop, 0.0).astype(dtype)


@st.composite
def masked_inputs(draw):
    """(x shape, mask shape): the mask keeps some of x's axes and has 1 (or nothing) for the others."""
    shape = draw(leading_shapes) + (draw(last_sizes),)
    kept = [draw(st.booleans()) for _ in shape]
    mask_shape = tuple(n if keep else 1 for n, keep in zip(shape, kept, strict=True))
    dropped_leading = draw(st.integers(0, len(shape) - 1))
    return shape, mask_shape[dropped_leading:]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", MASK_KINDS)
@given(shapes=masked_inputs(), seed=seeds)
def test_softmax_numba_matches_numpy(dtype, kind, shapes, seed):
    """softmax / log_softmax, forward and backward: the Numba kernels equal the NumPy references, for masks
    broadcast over leading axes (like (B, 1, 1, S) against (B, A, S, S)), including fully masked rows."""
    rng = np.random.default_rng(seed)
    x_shape, mask_shape = shapes
    x = (rng.standard_normal(x_shape) * 3).astype(dtype)
    mask = make_mask(kind, x_shape, mask_shape, dtype, rng, np.finfo(dtype).min)
    mask = softmax.prepare_mask(mask, x, "test")
    grad_y = rng.standard_normal(x_shape).astype(dtype)
    for forward_numpy, forward_numba, backward_numpy, backward_numba in [
        (softmax.softmax_forward_numpy, softmax.softmax_forward_numba,
         softmax.softmax_backward_numpy, softmax.softmax_backward_numba),
        (softmax.log_softmax_forward_numpy, softmax.log_softmax_forward_numba,
         softmax.log_softmax_backward_numpy, softmax.log_softmax_backward_numba),
    ]:
        y = forward_numpy(x, mask)
        assert_matches(forward_numba(x, mask), y, dtype)
        expected = backward_numpy(grad_y, y)
        assert_matches(backward_numba(grad_y, y), expected, dtype)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("kind", MASK_KINDS)
@given(shapes=masked_inputs(), seed=seeds)
def test_softmax_backward_is_the_gradient_of_its_forward(backend, log, kind, shapes, seed):
    """softmax_backward (log_softmax_backward) equals finite differences of softmax_forward
    (log_softmax_forward) in float64, with BERT's -10000 as the masking value."""
    rng = np.random.default_rng(seed)
    x_shape, mask_shape = shapes
    x = rng.standard_normal(x_shape)
    mask = make_mask(kind, x_shape, mask_shape, np.float64, rng, -10000.0)
    forward = softmax.log_softmax_forward if log else softmax.softmax_forward
    backward = softmax.log_softmax_backward if log else softmax.softmax_backward
    grad_y = rng.standard_normal(x_shape)
    assert_gradient(backward(grad_y, forward(x, mask)), lambda v: forward(v, mask), x, grad_y)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_fully_masked_rows_are_uniform_and_extremes_finite(backend, dtype):
    """A row masked everywhere with finfo(dtype).min (or -inf) comes out uniform, not nan; scores of +-1e4
    stay finite and put all weight on the largest entry."""
    x = np.array([[1.0, 2.0, 3.0, 4.0], [1e4, -1e4, 0.0, 1e4]], dtype=dtype)
    for drop in (np.finfo(dtype).min, -np.inf):
        mask = np.array([[drop, drop, drop, drop], [0.0, 0.0, 0.0, drop]], dtype=dtype)
        y = softmax.softmax_forward(x, mask)
        np.testing.assert_allclose(y, [[0.25] * 4, [1.0, 0.0, 0.0, 0.0]], atol=1e-6)
        log_y = softmax.log_softmax_forward(x, mask)
        assert np.all(np.isfinite(log_y))
        np.testing.assert_allclose(log_y[0], [-math.log(4)] * 4, rtol=1e-6)
        grad = softmax.softmax_backward(np.ones_like(y), y)
        assert np.all(np.isfinite(grad))


def test_softmax_mask_is_not_materialised():
    """The Numba kernel reads a (B, 1, 1, S) mask through an index per row of x, not a broadcast copy."""
    x = np.zeros((2, 3, 4, 5), dtype=np.float32)
    mask_rows, mask_row_of = softmax.mask_rows(np.zeros((2, 1, 1, 5), np.float32), x)
    assert mask_rows.shape == (2, 5)
    np.testing.assert_array_equal(mask_row_of, np.repeat([0, 1], 12))


# ---------------------------------------------------------------------------------------------------------
# GELU

def test_the_reference_erf_is_math_erf():
    """The NumPy reference computes erf with the standard library's math.erf, element by element: the
    same numbers, special values included."""
    grid = np.concatenate([np.linspace(-8.0, 8.0, 2001), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    np.testing.assert_array_equal(gelu.erf_numpy(grid), [math.erf(v) for v in grid])
    assert gelu.erf_numpy(grid.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("dtype", FLOATS)
def test_numba_exact_gelu_uses_the_exact_erf(dtype):
    """The Numba exact GELU and its derivative equal x Phi(x) and Phi(x) + x phi(x) computed with math.erf,
    to the dtype's precision, on enough points to be shared among threads."""
    x = np.linspace(-10.0, 10.0, 100_001).astype(dtype)
    wide = x.astype(np.float64)
    cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in wide])
    pdf = np.exp(-0.5 * wide * wide) / math.sqrt(2 * math.pi)
    rtol, atol = (1e-13, 1e-15) if dtype == np.float64 else (1.2e-7, 1e-37)
    np.testing.assert_allclose(gelu.gelu_forward_numba(x, "none"), wide * cdf, rtol=rtol, atol=atol)
    np.testing.assert_allclose(gelu.gelu_backward_numba(np.ones_like(x), x, "none"), cdf + wide * pdf,
                               rtol=rtol, atol=atol if dtype == np.float64 else 1e-7)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@given(shape=leading_shapes, seed=seeds)
def test_gelu_numba_matches_numpy(dtype, approximate, shape, seed):
    """gelu forward and backward, both forms: the Numba kernels equal the NumPy references."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    grad_y = rng.standard_normal(shape).astype(dtype)
    scale = max(1.0, float(np.max(np.abs(x))))
    expected_y = gelu.gelu_forward_numpy(x, approximate)
    expected_grad = gelu.gelu_backward_numpy(grad_y, x, approximate)
    assert_matches(gelu.gelu_forward_numba(x, approximate), expected_y, dtype, scale)
    assert_matches(gelu.gelu_backward_numba(grad_y, x, approximate), expected_grad, dtype,
                   scale * max(1.0, float(np.max(np.abs(grad_y)))))


def test_gelu_tanh_form_matches_its_formula():
    """The tanh form equals 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) written out here, on both
    backends, in float64 (the Numba kernel computes it through a sigmoid)."""
    x = np.linspace(-12.0, 12.0, 961)
    expected = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    for name in ("numpy", "numba"):
        with use_backend(name):
            np.testing.assert_allclose(gelu.gelu_forward(x, "tanh"), expected, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@given(shape=leading_shapes, seed=seeds)
def test_gelu_backward_is_the_gradient_of_its_forward(backend, approximate, shape, seed):
    """gelu_backward equals finite differences of gelu_forward in float64, on both backends."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    grad_y = rng.standard_normal(shape)
    assert_gradient(gelu.gelu_backward(grad_y, x, approximate), lambda v: gelu.gelu_forward(v, approximate),
                    x, grad_y, atol=1e-7)


# ---------------------------------------------------------------------------------------------------------
# LayerNorm

@pytest.mark.parametrize("dtype", FLOATS)
@given(shape=leading_shapes, hidden=last_sizes, seed=seeds)
@example(shape=(4,), hidden=2, seed=8192)  # a row of two nearly equal values that once failed in CI
def test_layer_norm_numba_matches_numpy(dtype, shape, hidden, seed):
    """layer_norm forward (y, mean, rstd) and backward (grad_x, grad_weight, grad_bias): the Numba kernels
    equal the NumPy references."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape + (hidden,)) * 2 + 1).astype(dtype)
    weight, bias = rng.standard_normal((2, hidden)).astype(dtype)
    grad_y = rng.standard_normal(x.shape).astype(dtype)
    expected = layernorm.layer_norm_forward_numpy(x, weight, bias, 1e-5)
    outputs = layernorm.layer_norm_forward_numba(x, weight, bias, 1e-5)
    _, mean, rstd = expected
    # x - mean rounds to a unit of |x|, and the row is then divided by its std: a row of nearly equal values
    # (hidden 2, std 0.005) magnifies that rounding by |x| / std, in the float32 reference above all
    conditioning = float(np.max(np.abs(x)) * np.max(rstd) * max(1.0, np.max(np.abs(weight))))
    for actual, wanted in zip(outputs, expected, strict=True):
        assert_matches(actual, wanted, dtype, max(1.0, conditioning * float(np.max(np.abs(wanted)))))
    # grad_x combines terms of size |grad_y| |weight| rstd: that is the scale its rounding errors follow
    scale = float(np.max(np.abs(grad_y)) * np.max(np.abs(weight)) * np.max(rstd) * hidden)
    grads = layernorm.layer_norm_backward_numba(grad_y, x, weight, mean, rstd)
    expected = layernorm.layer_norm_backward_numpy(grad_y, x, weight, mean, rstd)
    for actual, wanted in zip(grads, expected, strict=True):
        assert_matches(actual, wanted, dtype, max(1.0, scale, float(np.max(np.abs(wanted)))))


@given(shape=leading_shapes, hidden=st.integers(2, 9), seed=seeds)
def test_layer_norm_backward_is_the_gradient_of_its_forward(backend, shape, hidden, seed):
    """grad_x, grad_weight and grad_bias equal finite differences of y in float64."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape + (hidden,))
    weight, bias = rng.standard_normal((2, hidden))
    grad_y = rng.standard_normal(x.shape)
    _, mean, rstd = layernorm.layer_norm_forward(x, weight, bias, 1e-5)
    grad_x, grad_weight, grad_bias = layernorm.layer_norm_backward(grad_y, x, weight, mean, rstd)
    assert_gradient(grad_x, lambda v: layernorm.layer_norm_forward(v, weight, bias, 1e-5)[0], x, grad_y)
    assert_gradient(grad_weight, lambda w: layernorm.layer_norm_forward(x, w, bias, 1e-5)[0], weight, grad_y,
                    batched=False)
    assert_gradient(grad_bias, lambda b: layernorm.layer_norm_forward(x, weight, b, 1e-5)[0], bias, grad_y,
                    batched=False)


def test_layer_norm_uses_the_biased_variance(backend):
    """Normalising [1, 2, 3, 4] divides by sqrt(mean((x - 2.5)^2)) = sqrt(1.25), the biased variance."""
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    y, mean, rstd = layernorm.layer_norm_forward(x, np.ones(4), np.zeros(4), 0.0)
    np.testing.assert_allclose(mean, [2.5])
    np.testing.assert_allclose(rstd, [1 / math.sqrt(1.25)])
    np.testing.assert_allclose(y, (x - 2.5) / math.sqrt(1.25))


# ---------------------------------------------------------------------------------------------------------
# cross-entropy

@pytest.mark.parametrize("dtype", FLOATS)
@given(rows=st.integers(1, 6), classes=st.integers(1, 9), seed=seeds)
def test_cross_entropy_numba_matches_numpy(dtype, rows, classes, seed):
    """nll, logsumexp and grad_logits: the Numba kernels equal the NumPy references."""
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((rows, classes)) * 5).astype(dtype)
    targets = rng.integers(0, classes, rows)
    grad_nll = rng.random(rows).astype(dtype)
    nll, logsumexp = cross_entropy.softmax_cross_entropy_forward_numpy(logits, targets)
    actual_nll, actual_logsumexp = cross_entropy.softmax_cross_entropy_forward_numba(logits, targets)
    assert_matches(actual_nll, nll, dtype, max(1.0, float(np.max(np.abs(logits)))))
    assert_matches(actual_logsumexp, logsumexp, dtype)
    expected_grad = cross_entropy.softmax_cross_entropy_backward_numpy(grad_nll, logits, targets, logsumexp)
    actual_grad = cross_entropy.softmax_cross_entropy_backward_numba(grad_nll, logits, targets, logsumexp)
    assert_matches(actual_grad, expected_grad, dtype)


@given(rows=st.integers(1, 5), classes=st.integers(1, 8), seed=seeds)
def test_cross_entropy_backward_is_the_gradient_of_its_forward(backend, rows, classes, seed):
    """grad_logits equals finite differences of sum(grad_nll * nll) in float64."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((rows, classes)) * 2
    targets = rng.integers(0, classes, rows)
    grad_nll = rng.random(rows)
    _, logsumexp = cross_entropy.softmax_cross_entropy_forward(logits, targets)
    analytic = cross_entropy.softmax_cross_entropy_backward(grad_nll, logits, targets, logsumexp)

    def nll(v):  # v (..., N, C) -> (..., N): the leading axes become more rows, with the same targets
        rows = v.reshape(-1, classes)
        return cross_entropy.softmax_cross_entropy_forward(rows, np.resize(targets, len(rows)))[0].reshape(
            v.shape[:-1])

    assert_gradient(analytic, nll, logits, grad_nll)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cross_entropy_known_values_and_extremes(backend, dtype):
    """Uniform logits over 4 classes give ln 4; logits of +-1e4 give finite losses (0 and 2e4)."""
    logits = np.array([[0.0, 0.0, 0.0, 0.0], [1e4, -1e4, 0.0, 0.0], [1e4, -1e4, 0.0, 0.0]], dtype=dtype)
    nll, _ = cross_entropy.softmax_cross_entropy_forward(logits, np.array([2, 0, 1]))
    np.testing.assert_allclose(nll, [math.log(4), 0.0, 2e4], rtol=1e-6)


# ---------------------------------------------------------------------------------------------------------
# matmul

MATMUL_SHAPES = [((1, 1), (1, 1)), ((7, 13), (13, 5)), ((2, 3, 7, 13), (2, 3, 13, 5)),
                 ((37, 300), (300, 133)), ((3, 4, 33), (3, 33, 6))]


def _lesson_module(name):
    """A helper module of lessons/ (not a package: the lessons run as scripts), imported from its file and
    registered under its own name, as a lesson's `import blocked_matmul` would be (Numba's cache records it)."""
    if name not in sys.modules:
        path = Path(__file__).resolve().parent.parent / "lessons" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES)
def test_lesson_blocked_matmul_matches_blas(rng, dtype, shape_a, shape_b):
    """Lesson 04's blocked loop kernel equals a @ b for odd shapes, batched ones, and ones spanning several
    tiles (37x300 @ 300x133); also on the transposed views a backward pass multiplies."""
    blocked_matmul = _lesson_module("blocked_matmul").blocked_matmul
    a = rng.standard_normal(shape_a).astype(dtype)
    b = rng.standard_normal(shape_b).astype(dtype)
    grad_c = rng.standard_normal(shape_a[:-1] + shape_b[-1:]).astype(dtype)
    inner = shape_a[-1]
    assert_matches(blocked_matmul(a, b), a @ b, dtype, inner * 10)
    assert_matches(blocked_matmul(grad_c, b.swapaxes(-1, -2)), grad_c @ b.swapaxes(-1, -2), dtype,
                   shape_b[-1] * 10)
    assert_matches(blocked_matmul(a.swapaxes(-1, -2), grad_c), a.swapaxes(-1, -2) @ grad_c, dtype,
                   max(inner, shape_b[-1]) * 10)


# ---------------------------------------------------------------------------------------------------------
# fast_exp: the vectorisable exp behind the Numba kernels

@njit(parallel=True, fastmath=simd.VECTOR_SUMS)
def _fast_exp_in_a_vector_loop(x):
    # called the way the kernels call it: in a prange loop compiled with the kernels' fastmath flags
    y = np.empty_like(x)
    for i in prange(x.size):
        y[i] = simd.fast_exp(x[i])
    return y


def test_fast_exp_is_accurate_over_its_whole_range():
    """fast_exp is within 4 ulp (1e-15 relative) of np.exp from -708 to 709, 0 below, and passes nan on."""
    x = np.concatenate([np.linspace(-708.0, 709.0, 100_003), np.linspace(-2.0, 2.0, 10_001)])
    np.testing.assert_allclose(_fast_exp_in_a_vector_loop(x), np.exp(x), rtol=1e-15, atol=0)
    edges = _fast_exp_in_a_vector_loop(np.array([-709.0, -1e30, -np.inf, np.nan]))
    np.testing.assert_array_equal(edges[:3], 0.0)
    assert np.isnan(edges[3])


@njit(parallel=True)
def _fast_exp_single_in_a_vector_loop(x):
    y = np.empty_like(x)
    for i in prange(x.size):
        y[i] = simd.fast_exp_single(x[i])
    return y


def test_fast_exp_single_is_accurate_to_float32_over_its_whole_range():
    """fast_exp_single stays float32 and is within 1.2e-7 relative (about one float32 ulp) of the exact exp
    of its float32 argument from -87 to 88; below -87 it gives 0, and nan passes on."""
    x = np.concatenate([np.linspace(-87.0, 88.0, 100_003), np.linspace(-2.0, 2.0, 10_001)]).astype(np.float32)
    y = _fast_exp_single_in_a_vector_loop(x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, np.exp(x.astype(np.float64)), rtol=1.2e-7, atol=0)
    edges = _fast_exp_single_in_a_vector_loop(np.array([-87.5, -1e30, -np.inf, np.nan], dtype=np.float32))
    np.testing.assert_array_equal(edges[:3], 0.0)
    assert np.isnan(edges[3])


@given(st.integers(1, 40), st.sampled_from([np.float32, np.float64]), st.integers(0, 2**32 - 1))
def test_vector_max_is_the_max_of_every_length(length, dtype, seed):
    """vector_max's eight lanes and its tail loop cover every entry: the max is found wherever it stands, for
    lengths that are and are not multiples of 8."""
    values = np.random.default_rng(seed).standard_normal(length).astype(dtype)
    for where in {0, length // 2, length - 1}:
        values_with_peak = values.copy()
        values_with_peak[where] = 100.0
        assert simd.vector_max(values_with_peak) == 100.0
    assert simd.vector_max(values) == values.max()


# ---------------------------------------------------------------------------------------------------------
# backend switch and bad input

def test_backend_switch():
    """set_backend / get_backend / use_backend switch and restore, even after an error; bad names refused."""
    before = get_backend()
    with use_backend("numpy"):
        assert get_backend() == "numpy"
        with pytest.raises(RuntimeError), use_backend("numba"):
            assert get_backend() == "numba"
            raise RuntimeError
        assert get_backend() == "numpy"
    assert get_backend() == before
    with pytest.raises(ConfigError, match="'torch'"):
        set_backend("torch")
    assert get_backend() == before


@pytest.mark.parametrize("value, expected", [("numpy", "numpy"), ("numba", "numba"), (None, "numba")])
def test_backend_from_environment(value, expected):
    """MINIBERT_BACKEND sets the starting backend (default numba)."""
    env = {k: v for k, v in os.environ.items() if k != "MINIBERT_BACKEND"}
    if value is not None:
        env["MINIBERT_BACKEND"] = value
    code = "from minibert.kernels import dispatch; print(dispatch.get_backend())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected


def test_bad_backend_in_environment_fails_at_import_with_a_clear_message():
    """A misspelt MINIBERT_BACKEND stops the import with a message naming the variable and the choices."""
    env = dict(os.environ, MINIBERT_BACKEND="cuda")
    out = subprocess.run([sys.executable, "-c", "import minibert.kernels.dispatch"], env=env,
                         capture_output=True, text=True)
    assert out.returncode != 0
    assert "'cuda'" in out.stderr and "MINIBERT_BACKEND" in out.stderr and "numba, numpy" in out.stderr


def test_bad_input_gets_clear_errors():
    """Each kernel refuses integer arrays, shapes that do not fit, unknown GELU forms and bad targets, with
    our error types and messages naming the values."""
    x = np.ones((2, 3))
    with pytest.raises(DtypeError, match="int64"):
        softmax.softmax_forward(np.ones((2, 3), dtype=np.int64))
    with pytest.raises(ShapeError, match=r"\(4,\)"):
        softmax.softmax_forward(x, np.zeros(4))
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(3, 2\)"):
        softmax.softmax_backward(x, np.ones((3, 2)))
    with pytest.raises(ValueError, match="'erf'"):
        gelu.gelu_forward(x, "erf")
    with pytest.raises(ShapeError, match=r"\(4,\)"):
        layernorm.layer_norm_forward(x, np.ones(4), np.zeros(3), 1e-12)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        cross_entropy.softmax_cross_entropy_forward(x, np.array([0, 3]))
    with pytest.raises(DtypeError, match="float64"):
        cross_entropy.softmax_cross_entropy_forward(x, np.array([0.0, 1.0]))
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4, 5\)"):
        check_matmul(x, np.ones((4, 5)), "matmul")
    with pytest.raises(DtypeError, match="float32"):
        check_matmul(x, np.ones((3, 2), dtype=np.float32), "matmul")
    with pytest.raises(ShapeError, match="non-empty last axis"):
        layernorm.layer_norm_forward(np.ones((2, 0)), np.ones(0), np.ones(0), 1e-12)


# ---------------------------------------------------------------------------------------------------------
# Scatter-add of rows

@pytest.mark.parametrize("dtype", FLOATS)
@given(count=st.integers(0, 30), cols=st.integers(1, 9), num_rows=st.integers(1, 6), seed=seeds)
def test_scatter_add_rows_numba_matches_numpy(dtype, count, cols, num_rows, seed):
    """scatter_add_rows, Numba vs NumPy reference (np.add.at), with ids repeated (few table rows, many ids):
    every repeated id gets the sum of its rows, and rows never looked up stay zero."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, num_rows, size=count)
    rows = rng.standard_normal((count, cols)).astype(dtype)
    expected = np.zeros((num_rows, cols))
    for i, row in zip(ids, rows, strict=True):
        expected[i] += row
    for name in ("numpy", "numba"):
        with use_backend(name):
            table = scatter.scatter_add_rows(ids, rows, num_rows)
        assert table.dtype == dtype
        np.testing.assert_allclose(table, expected, rtol=TOLERANCE[dtype][0], atol=1e-6)


def test_scatter_add_rows_refuses_bad_ids_and_shapes():
    """An id outside the table, or a row count that differs from the id count, is a ShapeError."""
    rows = np.ones((3, 2), dtype=np.float32)
    with pytest.raises(ShapeError, match="outside the table"):
        scatter.scatter_add_rows(np.array([0, 1, 4]), rows, 4)
    with pytest.raises(ShapeError, match="one row per id"):
        scatter.scatter_add_rows(np.array([0, 1]), rows, 4)
