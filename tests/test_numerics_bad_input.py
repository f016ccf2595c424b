"""Numerical faults: softmax, log-softmax, LayerNorm and cross-entropy stay finite (forward and backward) on
extreme values (logits of +-1e4) and on rows that are entirely masked, on both backends and both dtypes;
so does the whole model on a batch holding a sequence of padding only."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from minibert import Tensor
from minibert import functional as F
from minibert.model import BertConfig, BertForPreTraining, pretraining_loss
from minibert.model.losses import cross_entropy

EXTREME = 1e4
DTYPES = [np.float32, np.float64]


@st.composite
def extreme_rows(draw):
    """(x, keep): x (R, C) mixing +-1e4, 0 and ordinary values; keep (R, C) boolean with at least one row
    masked everywhere and one row kept everywhere."""
    rows, cols = draw(st.integers(2, 6)), draw(st.integers(1, 9))
    values = st.sampled_from([EXTREME, -EXTREME, 0.0, 1.0, -3.5, EXTREME - 1.0])
    x = draw(arrays(np.float64, (rows, cols), elements=values))
    keep = draw(arrays(np.bool_, (rows, cols)))
    keep[0] = False  # an entirely masked row (e.g. a query whose keys are all padding)
    keep[1] = True
    return x, keep


def _finite(*arrays_):
    return all(np.isfinite(np.asarray(a)).all() for a in arrays_)


def _mask(keep, form, dtype):
    """The boolean mask (True = keep), or its additive form with -inf where a key is dropped."""
    return keep if form == "boolean" else np.where(keep, 0.0, -np.inf).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", ["boolean", "additive -inf"])
@given(case=extreme_rows())
def test_softmax_is_finite_on_extreme_and_fully_masked_rows(backend, dtype, form, case):
    """Softmax rows sum to 1; masked entries get 0 unless the whole row is masked (then it is uniform, not
    nan, even with a -inf mask); the backward of an arbitrary upstream gradient is finite."""
    x, keep = case
    logits = Tensor(x.astype(dtype), requires_grad=True)
    probs = F.softmax(logits, mask=_mask(keep, form, dtype))
    probs.backward(np.linspace(-1, 1, x.size).reshape(x.shape))
    assert _finite(probs.data, logits.grad)
    np.testing.assert_allclose(probs.data.sum(axis=-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(probs.data[0], 1.0 / x.shape[1], rtol=1e-5)
    partly = keep.any(axis=-1)
    assert (probs.data[partly][~keep[partly]] == 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", ["boolean", "additive -inf"])
@given(case=extreme_rows())
def test_log_softmax_is_finite_on_extreme_and_fully_masked_rows(backend, dtype, form, case):
    """log-softmax is finite at kept entries and at every entry of a fully masked row (-log C there), and
    its gradient is finite everywhere."""
    x, keep = case
    logits = Tensor(x.astype(dtype), requires_grad=True)
    log_probs = F.log_softmax(logits, mask=_mask(keep, form, dtype))
    log_probs.backward(np.ones(x.shape))
    assert _finite(log_probs.data[keep], log_probs.data[0], logits.grad)
    np.testing.assert_allclose(log_probs.data[0], -np.log(x.shape[1]), rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@given(case=extreme_rows())
def test_layer_norm_is_finite_on_extreme_and_constant_rows(backend, dtype, case):
    """LayerNorm of rows holding +-1e4 (variance 1e8) and of constant rows (variance 0, eps = 1e-12) is
    finite forward and backward; a constant row normalises to its bias."""
    x, _ = case
    x = x.astype(dtype)
    x[0] = EXTREME  # a constant row: x - mean = 0 exactly, rstd = 1/sqrt(eps) = 1e6
    inputs = Tensor(x, requires_grad=True)
    weight = Tensor(np.full(x.shape[1], 2.0, dtype), requires_grad=True)
    bias = Tensor(np.full(x.shape[1], 0.5, dtype), requires_grad=True)
    out = F.layer_norm(inputs, weight, bias, eps=1e-12)
    out.backward(np.linspace(-1, 1, x.size).reshape(x.shape))
    assert _finite(out.data, inputs.grad, weight.grad, bias.grad)
    np.testing.assert_allclose(out.data[0], 0.5)


@pytest.mark.parametrize("dtype", DTYPES)
@given(case=extreme_rows(), targets_seed=st.integers(0, 2**16))
def test_cross_entropy_is_finite_on_extreme_logits_and_all_zero_weights(backend, dtype, case, targets_seed):
    """Cross-entropy of +-1e4 logits is finite (at most about 2e4 per row) with finite gradients; with every
    weight 0 (a batch whose masked slots are all padding) the loss is exactly 0 and so is every gradient;
    with every target ignored, likewise."""
    x, _ = case
    targets = np.random.default_rng(targets_seed).integers(0, x.shape[1], x.shape[0])
    for weights, ignore in ((None, None), (np.zeros(x.shape[0]), None), (None, "all")):
        logits = Tensor(x.astype(dtype), requires_grad=True)
        if ignore:
            loss = cross_entropy(logits, np.full_like(targets, -100), ignore_index=-100)
        else:
            loss = cross_entropy(logits, targets, weights=weights)
        loss.backward()
        assert _finite(loss.data, logits.grad)
        assert loss.item() <= 2 * EXTREME + 1
        if weights is not None or ignore:
            assert loss.item() == 0 and not logits.grad.any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_whole_model_on_a_sequence_of_padding_only(backend, dtype):
    """A batch whose second sequence is entirely padding (attention_mask all 0: every key masked) and whose
    masked slots all carry weight 0 still gives a finite loss and finite gradients for every parameter."""
    config = BertConfig.preset("tiny", num_hidden_layers=1, hidden_size=32, intermediate_size=64,
                               vocab_size=64, max_position_embeddings=16)
    model = BertForPreTraining(config).to(dtype)
    input_ids = np.array([[2, 7, 8, 9, 3, 0], [0, 0, 0, 0, 0, 0]])
    attention_mask = (input_ids != 0).astype(np.int64)
    output = model(input_ids, attention_mask=attention_mask, masked_positions=[[1, 2], [0, 0]])
    loss, _, _ = pretraining_loss(output, [[7, 8], [0, 0]], [[1, 1], [0, 0]], [0, 1])
    loss.backward()
    assert _finite(loss.data, output.sequence_output.data)
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None and _finite(parameter.grad), name
