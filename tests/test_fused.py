"""The fused ops: each kernel against its NumPy reference and against the plain ops it stands for, its
backward against finite differences in float64, and a whole model run fused and plain (nn/fusion.py)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from helpers import FLOATS, assert_gradient, assert_matches, leading_shapes, loss_and_gradients_of_a_step, seeds
from hypothesis import given
from hypothesis import strategies as st

from minibert import Tensor, gradcheck
from minibert import functional as F
from minibert.errors import ShapeError
from minibert.kernels import DtypeError, add_norm, attention_weights, dropout, gelu, layernorm, softmax
from minibert.nn import fused_ops, use_fused_ops

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
        F.dropout_add_layer_norm(Tensor(h), Tensor(residual), Tensor(weight), Tensor(bias), 1e-12, 0.1, True)


def test_dropout_add_layer_norm_op(backend):
    """F.dropout_add_layer_norm passes the finite-difference check for all four inputs with dropout on,
    equals the plain ops given the same Generator, and in eval mode draws nothing and drops nothing."""
    def leaf(shape, seed):
        return Tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)

    h, residual, weight, bias = leaf((2, 3, 5), 1), leaf((2, 3, 5), 2), leaf((5,), 3), leaf((5,), 4)
    assert gradcheck(lambda *args: F.dropout_add_layer_norm(*args, 1e-12, 0.3, True, np.random.default_rng(5)),
                     h, residual, weight, bias)
    fused = F.dropout_add_layer_norm(h, residual, weight, bias, 1e-12, 0.3, True, np.random.default_rng(5))
    plain = F.layer_norm(residual + F.dropout(h, 0.3, True, np.random.default_rng(5)), weight, bias, 1e-12)
    np.testing.assert_allclose(fused.data, plain.data, rtol=1e-12)
    untouched = np.random.default_rng(5)
    evaluated = F.dropout_add_layer_norm(h, residual, weight, bias, 1e-12, 0.3, False, untouched)
    np.testing.assert_allclose(evaluated.data, F.layer_norm(residual + h, weight, bias, 1e-12).data, rtol=1e-12)
    assert untouched.integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)


# ---------------------------------------------------------------------------------------------------------
# bias + GELU: gelu(x + bias)

@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", FLOATS)
@given(shape=leading_shapes, cols=st.integers(1, 40), seed=seeds)
def test_bias_gelu_numba_matches_numpy_and_the_plain_ops(dtype, approximate, shape, cols, seed):
    """(y, slope): each backend's kernel equals its gelu_with_slope of x + bias (whose two backends
    test_kernels.py compares); (grad_x, grad_bias): both equal grad_y * slope and its sum over rows."""
    rng = np.random.default_rng(seed)
    x, grad_y = (rng.standard_normal(shape + (cols,)).astype(dtype) * 3 for _ in range(2))
    bias = rng.standard_normal(cols).astype(dtype)
    for fused, plain in ((gelu.bias_gelu_with_slope_numba, gelu.gelu_with_slope_numba),
                         (gelu.bias_gelu_with_slope_numpy, gelu.gelu_with_slope_numpy)):
        for actual, wanted in zip(fused(x, bias, approximate), plain(x + bias, approximate), strict=True):
            assert_matches(actual, wanted, dtype)
    slope = gelu.gelu_with_slope(x + bias, approximate)[1]
    grad_x = grad_y * slope
    wanted = (grad_x, grad_x.reshape(-1, cols).sum(axis=0, dtype=np.float64).astype(dtype))
    rows = grad_x.size // cols
    for kernel in (gelu.bias_gelu_backward_numba, gelu.bias_gelu_backward_numpy):
        actual = kernel(grad_y, slope)
        assert_matches(actual[0], wanted[0], dtype)
        # a sum of `rows` terms: float32's rounding grows with their count and size
        assert_matches(actual[1], wanted[1], dtype, max(1.0, rows * float(np.max(np.abs(grad_x)))))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_bias_gelu_op(backend, approximate):
    """F.bias_gelu passes the finite-difference check for x and bias, equals F.gelu(x + bias), and without
    gradients it keeps no slope."""
    def leaf(shape, seed):
        return Tensor(np.random.default_rng(seed).standard_normal(shape) * 2, requires_grad=True)

    x, bias = leaf((2, 3, 5), 1), leaf((5,), 2)
    assert gradcheck(lambda x, bias: F.bias_gelu(x, bias, approximate), x, bias)
    np.testing.assert_allclose(F.bias_gelu(x, bias, approximate).data, F.gelu(x + bias, approximate).data,
                               rtol=1e-14)
    constant = Tensor(x.data)
    np.testing.assert_allclose(F.bias_gelu(constant, Tensor(bias.data), approximate).data,
                               F.gelu(x + bias, approximate).data, rtol=1e-14)


def test_bias_gelu_refuses_bad_input():
    """A bias that does not match x's last axis, an unknown form: errors that say what to do."""
    x, bias = Tensor(np.ones((2, 4), np.float32)), Tensor(np.ones(4, np.float32))
    with pytest.raises(ShapeError, match=r"\(4,\)"):
        F.bias_gelu(x, Tensor(np.ones(3, np.float32)))
    with pytest.raises(ShapeError, match="bias"):
        gelu.bias_gelu_with_slope(np.ones((2, 4)), np.ones(3))
    with pytest.raises(ValueError, match="erf"):
        F.bias_gelu(x, bias, "exact")
    with pytest.raises(ShapeError, match="grad_y"):
        gelu.bias_gelu_backward(np.ones((2, 3)), np.ones((2, 4)))


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
def test_self_attention_op_equals_the_plain_layer(backend, mask_kind):
    """MultiHeadSelfAttention in training mode with dropout, fused and plain, from the same Generator state:
    the same context, weights and gradients for x and every parameter; and F.self_attention passes the
    finite-difference check."""
    from minibert.nn import MultiHeadSelfAttention

    x = np.random.default_rng(1).standard_normal((2, 5, 8))
    keep = np.ones((2, 1, 5, 5), dtype=bool) if mask_kind == "causal" else np.ones((2, 1, 1, 5), dtype=bool)
    keep[1, ..., 4] = False
    if mask_kind == "causal":
        keep &= np.tri(5, dtype=bool)
    keep = None if mask_kind == "none" else keep
    results = []
    for fused in (True, False):
        layer = MultiHeadSelfAttention(8, 2, 0.3, np.random.default_rng(0), std=0.5).to(np.float64).train()
        inputs = Tensor(x, requires_grad=True)
        with use_fused_ops(fused):
            context, probs = layer(inputs, keep)
            (context * np.arange(context.size).reshape(context.shape)).sum().backward()
        results.append([context.data, probs.data, inputs.grad] + [p.grad for p in layer.parameters()])
    for fused, plain in zip(*results, strict=True):
        np.testing.assert_allclose(fused, plain, rtol=1e-10, atol=1e-12)
    qkv = Tensor(np.random.default_rng(2).standard_normal((2, 5, 24)), requires_grad=True)
    assert gradcheck(lambda qkv: F.self_attention(qkv, 2, keep, 0.3, True, np.random.default_rng(3))[0], qkv)


def test_self_attention_refuses_bad_input():
    """qkv that is not (B, S, 3H) for the heads, a mask of the wrong shape: errors that say what to do."""
    with pytest.raises(ShapeError, match="3H"):
        F.self_attention(Tensor(np.ones((2, 5, 8))), 2, None, 0.0, False)
    with pytest.raises(ShapeError, match="mask"):
        F.self_attention(Tensor(np.ones((2, 5, 12))), 2, np.ones((2, 1, 1, 4), bool), 0.0, False)


# ---------------------------------------------------------------------------------------------------------
# A whole model, fused and plain

def test_a_model_gives_the_same_loss_and_gradients_fused_and_plain():
    """A pretraining step of a small BERT in float64 with BERT's dropout: the fused ops and the plain ones
    draw the same dropout masks from the model's Generator and give the same loss and gradients."""
    from minibert.model import BertConfig, BertForPreTraining

    results = []
    for fused in (True, False):
        model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=64), seed=0).to(np.float64).train()
        with use_fused_ops(fused):
            results.append(loss_and_gradients_of_a_step(model, batch_size=3, seq_len=12, predictions=2))
    for fused, plain in zip(*results, strict=True):
        np.testing.assert_allclose(fused, plain, rtol=1e-9, atol=1e-12)


FUSED_OPS = {"SelfAttention", "BiasGELU", "AddNorm"}  # functional.py's ops that stand for several plain ones

# In a fresh interpreter: the op of every node of the graph of a pretraining step, recorded before backward.
GRAPH_OPS = """
import json
import numpy as np
from minibert import BertConfig, BertForPreTraining, pretraining_loss
model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=64), seed=0).train()
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
loss.backward()
print(json.dumps(sorted(ops)))
"""


def test_a_fresh_model_records_the_plain_ops_in_its_graph():
    """What a student steps through is what runs: by default a pretraining step's graph holds softmax,
    dropout and LayerNorm, and none of the fused ops."""
    done = subprocess.run([sys.executable, "-c", GRAPH_OPS], capture_output=True, text=True, check=True)
    ops = set(json.loads(done.stdout))
    assert {"Softmax", "Dropout", "LayerNorm", "GELU"} <= ops
    assert not ops & FUSED_OPS


def test_use_fused_ops_switches_for_good_or_for_a_block():
    """Called, the switch holds from then on; as a `with` block, the setting before is restored after, also
    when the block raises."""
    assert not fused_ops()
    try:
        use_fused_ops()
        assert fused_ops()
        with pytest.raises(RuntimeError, match="inside"), use_fused_ops(False):
            assert not fused_ops()
            raise RuntimeError("inside")
        assert fused_ops()
    finally:
        use_fused_ops(False)
    assert not fused_ops()
