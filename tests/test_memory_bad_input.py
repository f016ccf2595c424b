"""The up-front memory estimate (minibert/model/memory.py): close to what a step really allocates, and a
batch or a model far larger than the machine refused before anything is allocated."""

import tracemalloc
import warnings

import numpy as np
import pytest

from minibert.fast import accelerate
from minibert.model import BertConfig, BertForPreTraining
from minibert.model.memory import (
    MemoryWarning,
    OutOfMemoryError,
    check_model_memory,
    check_step_memory,
    count_parameters,
    estimate_step_memory,
)
from minibert.optim import LRScheduler, bert_optimizer, constant
from minibert.train.pretraining_config import PretrainingConfig
from minibert.train.update import train_step

GB = 10**9


ODD_SIZES = {"num_hidden_layers": 3, "hidden_size": 48, "num_attention_heads": 3, "intermediate_size": 100,
             "vocab_size": 77, "type_vocab_size": 3}


@pytest.mark.parametrize("overrides", [{}, ODD_SIZES])
def test_parameter_count_matches_the_model(overrides):
    """count_parameters(config), computed from the config alone, equals the parameters the model builds."""
    config = BertConfig.preset("tiny", **overrides)
    assert count_parameters(config) == BertForPreTraining(config).num_parameters()


def _train_steps(config, batch_size, seq_len, predictions, steps, on_step=lambda: None):
    """`steps` training steps as the pretraining loop takes them (`train_step`), on a random batch."""
    rng = np.random.default_rng(0)
    input_ids = rng.integers(5, config.vocab_size, (batch_size, seq_len))
    batch = {"input_ids": input_ids, "segment_ids": np.zeros_like(input_ids), "input_mask": np.ones_like(input_ids),
             "masked_lm_positions": np.sort(rng.integers(1, seq_len, (batch_size, predictions)), axis=1),
             "masked_lm_ids": rng.integers(5, config.vocab_size, (batch_size, predictions)),
             "masked_lm_weights": np.ones((batch_size, predictions)),
             "next_sentence_labels": rng.integers(0, 2, batch_size)}
    model = accelerate(BertForPreTraining(config))  # as the training commands run it
    optimizer = bert_optimizer(model.named_parameters(), lr=1e-4)
    scheduler, parameters = LRScheduler(optimizer, constant), model.parameters()
    for _ in range(steps):
        on_step()
        train_step(model, parameters, optimizer, scheduler, batch, PretrainingConfig())


def _measured_step_peak(config, batch_size, seq_len, predictions):
    """tracemalloc's peak over one whole training step (the second one: Adam's state exists by then),
    counting the model and optimizer, which are built inside the traced span; accelerated, as the training
    commands run it (and the estimate counts)."""
    _train_steps(config, 1, 8, 1, steps=1)  # load the kernels first: Numba's compiler state is not the step's
    tracemalloc.start()
    try:
        _train_steps(config, batch_size, seq_len, predictions, steps=2, on_step=tracemalloc.reset_peak)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("overrides, sizes", [
    ({}, (4, 128, 8)),  # attention scores dominate
    ({"num_attention_heads": 8, "attention_probs_dropout_prob": 0.0}, (2, 64, 4)),
    ({"vocab_size": 4096, "hidden_dropout_prob": 0.0}, (4, 16, 12)),  # the MLM logits dominate
])
def test_estimate_is_close_to_the_measured_peak(backend, overrides, sizes):
    """With the Numba kernels (training's backend) the estimate lies within 20% of the peak tracemalloc
    measures over a real step. NumPy's reference kernels, written for reading, make short-lived float64
    temporaries (a dozen (B, S, I) arrays in the exact GELU's erf) that the estimate leaves out: there it
    still reaches half the peak."""
    config = BertConfig.preset("tiny", **overrides)
    measured = _measured_step_peak(config, *sizes)
    estimate = estimate_step_memory(config, *sizes)
    low, high = (0.8, 1.2) if backend == "numba" else (0.5, 1.2)
    assert low <= estimate / measured <= high, (estimate, measured)


def test_estimate_grows_as_the_batch_and_the_square_of_the_length():
    """Doubling the batch at most doubles the memory; doubling the length more than doubles the
    attention part (scores are S x S), so a long-sequence estimate grows faster than a long-batch one."""
    config = BertConfig.preset("base")
    base = estimate_step_memory(config, 8, 128, 20)
    assert estimate_step_memory(config, 16, 128, 20) < 2 * base
    assert estimate_step_memory(config, 8, 256, 20) > estimate_step_memory(config, 16, 128, 20)


def test_a_batch_far_too_large_is_refused_up_front():
    """BERT-base at batch 256 x 512 (the paper's) on an 8 GB machine: an OutOfMemoryError (a MinibertError
    and a MemoryError) naming the sizes and the fix, before any array is allocated."""
    with pytest.raises(OutOfMemoryError) as caught:
        check_step_memory(BertConfig.preset("base"), 256, 512, 80, available=8 * GB)
    message = str(caught.value)
    assert "batch_size=256" in message and "seq_len=512" in message and "8.00 GB" in message
    assert "lower the batch size" in message
    assert isinstance(caught.value, MemoryError) and isinstance(caught.value, ValueError)


def test_a_batch_that_barely_fits_warns_and_one_that_fits_is_silent():
    """More than half the available memory: a MemoryWarning; a small share: no warning at all."""
    config = BertConfig.preset("mini")
    needed = estimate_step_memory(config, 32, 128, 20)
    with pytest.warns(MemoryWarning, match="consider a smaller batch size"):
        assert check_step_memory(config, 32, 128, 20, available=int(needed * 1.2)) == needed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_step_memory(config, 32, 128, 20, available=needed * 10)


@pytest.mark.parametrize("bad", [-1, 2.5, "8", True, None])
def test_bad_sizes_are_refused(bad):
    """A size that is not a whole number >= 0 is named in a ConfigError, not a NumPy error."""
    with pytest.raises(ValueError, match="batch_size"):
        estimate_step_memory(BertConfig.preset("tiny"), bad, 128, 20)


def test_a_config_claiming_terabytes_of_weights_is_refused_before_allocating(monkeypatch):
    """A model whose float32 weights exceed the available memory is refused by the constructor (so a
    hostile config.json or checkpoint meta cannot make the initialiser allocate until the process dies)."""
    huge = BertConfig.preset("tiny", vocab_size=10**11)
    with pytest.raises(OutOfMemoryError, match="100000000000"):
        check_model_memory(huge, available=8 * GB)
    monkeypatch.setattr("minibert.model.memory.available_memory", lambda: 8 * GB)
    tracemalloc.start()
    try:
        with pytest.raises(OutOfMemoryError, match="smaller preset"):
            BertForPreTraining(huge)
        allocated = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert allocated < 10**7
