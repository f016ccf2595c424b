"""Tests for minibert.optim: the three Adam rules, BERT's parameter groups, schedules, clipping, state dicts.

Expected numbers come from formulas written out again here (the textbook form of each rule), from hand
arithmetic, or from PyTorch (tests/fixtures/optim/golden.npz, written by make_golden.py beside it).
"""

import io
import json
import math
import pathlib
import re
import tracemalloc
from functools import partial

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert.errors import CheckpointError, ConfigError, ShapeError
from minibert.optim import (
    BERT_DEFAULTS,
    Adam,
    AdamW,
    BertAdam,
    LRScheduler,
    bert_optimizer,
    bert_param_groups,
    clip_grad_norm,
    constant,
    linear_warmup_linear_decay,
    warmup_stable_decay,
)

GOLDEN = pathlib.Path(__file__).parent / "fixtures" / "optim"
RULES = {"adam": Adam, "adamw": AdamW, "bert_adam": BertAdam}


class Param:
    """The duck type the optimizers need: `.data` (updated in place) and `.grad` (or None)."""

    def __init__(self, data, grad=None):
        self.data = data
        self.grad = grad


def textbook_steps(rule, param, grads, lr, betas, eps, weight_decay):
    """The parameter after each step, from each rule's formulas as the papers write them (float64)."""
    beta1, beta2 = betas
    m = np.zeros_like(param)
    v = np.zeros_like(param)
    history = []
    for t, grad in enumerate(grads, start=1):
        if rule == "adam":
            grad = grad + weight_decay * param
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        if rule == "bert_adam":
            param = param - lr * (m / (np.sqrt(v) + eps) + weight_decay * param)
        else:
            m_hat = m / (1 - beta1**t)
            v_hat = v / (1 - beta2**t)
            if rule == "adamw":
                param = param - lr * weight_decay * param
            param = param - lr * m_hat / (np.sqrt(v_hat) + eps)
        history.append(param)
    return history


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_rules_follow_their_textbook_formulas_over_several_steps(rule, weight_decay, rng):
    """Four steps of each rule, with and without weight decay, equal the formulas in the docstring table.

    One parameter has more entries than a slice (SLICE_SIZE), so slice-by-slice updating is covered too.
    Tolerance: float64, rtol 1e-12 (only the order of the arithmetic differs).
    """
    shapes = [(3, 5), (300, 250)]
    params = [Param(rng.standard_normal(shape)) for shape in shapes]
    start = [param.data.copy() for param in params]
    grads = [[rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 2, size=shape) for shape in shapes]
             for _ in range(4)]
    hyper = {"lr": 0.01, "betas": (0.9, 0.98), "eps": 1e-6, "weight_decay": weight_decay}
    optimizer = RULES[rule]([param for param in params], **hyper)
    expected = [textbook_steps(rule, start[i], [step[i] for step in grads], **hyper) for i in range(2)]
    for step, step_grads in enumerate(grads):
        for param, grad in zip(params, step_grads, strict=True):
            param.grad = grad
        optimizer.step()
        for i, param in enumerate(params):
            np.testing.assert_allclose(param.data, expected[i][step], rtol=1e-12, atol=1e-15)


def test_first_step_by_hand_shows_the_missing_bias_correction():
    """After one step from zero state, bias-corrected Adam moves each entry by lr·g/(|g|+eps) ≈ lr, while
    BERT's rule moves it by lr·(1-β1)·g/(√(1-β2)·|g|+eps) ≈ lr·0.1/0.0316 = 3.16·lr: hand arithmetic."""
    grad = np.array([2.0, -0.5])
    adam_param, bert_param = Param(np.zeros(2), grad), Param(np.zeros(2), grad)
    Adam([adam_param], lr=0.001, eps=0.0).step()
    BertAdam([bert_param], lr=0.001, eps=0.0, weight_decay=0.0).step()
    np.testing.assert_allclose(adam_param.data, [-0.001, 0.001], rtol=1e-12)
    np.testing.assert_allclose(bert_param.data, [-0.0031622776601683794, 0.0031622776601683794], rtol=1e-12)


@pytest.mark.parametrize("rule", sorted(RULES))
def test_float32_parameters_keep_float32_state_and_track_float64(rule, rng):
    """float32 parameters stay float32, their Adam state is float32, and 5 steps agree with a float64 run
    to float32 precision (rtol 1e-5 on the parameter after 5 steps, atol 1e-6)."""
    start = rng.standard_normal((4, 6))
    grads = [rng.standard_normal((4, 6)) for _ in range(5)]
    param32 = Param(start.astype(np.float32))
    optimizer = RULES[rule]([param32], lr=0.01, weight_decay=0.01)
    for grad in grads:
        param32.grad = grad.astype(np.float32)
        optimizer.step()
    assert param32.data.dtype == np.float32
    assert all(value.dtype == np.float32 for key, value in optimizer.state[0].items() if key != "step")
    defaults = optimizer.param_groups[0]
    expected = textbook_steps(rule, start, grads, 0.01, defaults["betas"], defaults["eps"], 0.01)[-1]
    np.testing.assert_allclose(param32.data, expected, rtol=1e-5, atol=1e-6)


def test_parameter_without_gradient_is_skipped_and_its_step_count_waits(rng):
    """A parameter whose .grad is None is not moved (not even by weight decay) and its step count does not
    advance, as in torch; its next update uses step 1's bias correction."""
    moving, idle = Param(rng.standard_normal(3)), Param(rng.standard_normal(3))
    idle_start = idle.data.copy()
    optimizer = AdamW([moving, idle], lr=0.1, weight_decay=0.5)
    moving.grad = np.ones(3)
    optimizer.step()
    optimizer.step()
    np.testing.assert_array_equal(idle.data, idle_start)
    assert optimizer.state[0]["step"] == 2 and 1 not in optimizer.state
    idle.grad = np.full(3, 4.0)
    optimizer.step()
    assert optimizer.state[1]["step"] == 1
    # One AdamW step from zero state: p·(1 - lr·wd) - lr·g/(|g| + eps), with eps 1e-8 negligible.
    np.testing.assert_allclose(idle.data, idle_start * (1 - 0.05) - 0.1, rtol=1e-7)


def test_zero_grad_sets_none_or_fills_zeros():
    """zero_grad() drops the gradients (PyTorch's default); with set_to_none=False it zeroes them in place."""
    param = Param(np.ones(2), np.ones(2))
    grad = param.grad
    optimizer = Adam([param])
    optimizer.zero_grad(set_to_none=False)
    assert param.grad is grad and not grad.any()
    optimizer.zero_grad()
    assert param.grad is None


NAMES = [
    "bert.embeddings.word_embeddings.weight",
    "bert.embeddings.LayerNorm.weight",
    "bert.embeddings.LayerNorm.bias",
    "bert.encoder.layer.0.attention.self.query.weight",
    "bert.encoder.layer.0.attention.self.query.bias",
    "bert.encoder.layer.0.attention.output.LayerNorm.weight",
    "bert.encoder.layer.0.output.dense.weight",
    "cls.predictions.bias",
]
DECAYED = {"bert.embeddings.word_embeddings.weight", "bert.encoder.layer.0.attention.self.query.weight",
           "bert.encoder.layer.0.output.dense.weight"}


def test_bert_param_groups_exclude_layer_norm_and_bias_by_name(rng):
    """bert_param_groups puts weight matrices and embeddings in a decayed group and every LayerNorm and bias
    parameter (HF names) in a group with weight_decay 0, keeping each parameter object."""
    params = {name: Param(rng.standard_normal(2)) for name in NAMES}
    groups = bert_param_groups(params.items(), weight_decay=0.02)
    assert [group["weight_decay"] for group in groups] == [0.02, 0.0]
    assert set(groups[0]["names"]) == DECAYED
    assert set(groups[1]["names"]) == set(NAMES) - DECAYED
    for group in groups:
        assert [id(p) for p in group["params"]] == [id(params[name]) for name in group["names"]]


@pytest.mark.parametrize("rule", sorted(RULES))
def test_weight_decay_skips_layer_norm_and_bias_in_every_rule(rule, rng):
    """With zero gradients the Adam part of every rule is 0, so one step only decays: decayed parameters
    become p·(1 - lr·wd) (AdamW, BertAdam) or stay put (Adam's L2 term is divided by its own √v, giving
    p - lr·sign(p)); LayerNorm and bias parameters are bit-for-bit unchanged."""
    params = {name: Param(rng.standard_normal(3) + 5.0, np.zeros(3)) for name in NAMES}
    start = {name: param.data.copy() for name, param in params.items()}
    optimizer = RULES[rule](bert_param_groups(params.items(), weight_decay=0.1), lr=0.01, eps=1e-12)
    optimizer.step()
    for name, param in params.items():
        if name not in DECAYED:
            np.testing.assert_array_equal(param.data, start[name])
        elif rule == "adam":
            np.testing.assert_allclose(param.data, start[name] - 0.01, rtol=1e-9)
        else:
            np.testing.assert_allclose(param.data, start[name] * (1 - 0.01 * 0.1), rtol=1e-12)


def test_bert_optimizer_uses_google_hyperparameters(rng):
    """bert_optimizer builds the chosen rule with β (0.9, 0.999), eps 1e-6 and weight decay 0.01 on the
    decayed group only; an unknown rule name is refused with the choices listed."""
    params = [(name, Param(rng.standard_normal(2))) for name in NAMES]
    optimizer = bert_optimizer(params, lr=1e-4, rule="adamw")
    assert type(optimizer) is AdamW
    for group in optimizer.param_groups:
        assert group["betas"] == (0.9, 0.999) and group["eps"] == 1e-6 and group["lr"] == 1e-4
    assert [group["weight_decay"] for group in optimizer.param_groups] == [0.01, 0.0]
    assert BERT_DEFAULTS == {"betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.01}
    assert type(bert_optimizer(params, lr=1e-4)) is BertAdam
    with pytest.raises(ConfigError, match="'sgd'.*adamw"):
        bert_optimizer(params, lr=1e-4, rule="sgd")


def test_param_groups_with_different_learning_rates(rng):
    """Each group uses its own lr: Adam's first step moves every entry by about lr (m̂/√v̂ = ±1), so the two
    groups move by 0.1 and 0.001 while the defaults fill in what a group does not set."""
    fast, slow = Param(np.zeros(4), rng.standard_normal(4)), Param(np.zeros(4), rng.standard_normal(4))
    optimizer = Adam([{"params": [fast], "lr": 0.1}, {"params": [slow]}], lr=0.001, betas=(0.5, 0.6))
    optimizer.step()
    np.testing.assert_allclose(np.abs(fast.data), 0.1, rtol=1e-6)
    np.testing.assert_allclose(np.abs(slow.data), 0.001, rtol=1e-6)
    assert optimizer.param_groups[1]["betas"] == (0.5, 0.6)


def state_dict_through_npz_and_json(state_dict):
    """What a checkpoint does: arrays into an .npz (no pickle), everything else through JSON."""
    arrays = {f"{position}.{key}": value for position, entries in state_dict["state"].items()
              for key, value in entries.items() if isinstance(value, np.ndarray)}
    scalars = {"param_groups": state_dict["param_groups"],
               "steps": {str(position): entries["step"] for position, entries in state_dict["state"].items()}}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    loaded = np.load(buffer, allow_pickle=False)
    scalars = json.loads(json.dumps(scalars))
    state = {position: {"step": step, "exp_avg": loaded[f"{position}.exp_avg"],
                        "exp_avg_sq": loaded[f"{position}.exp_avg_sq"]}
             for position, step in scalars["steps"].items()}
    return {"state": state, "param_groups": scalars["param_groups"]}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_state_dict_round_trip_continues_bit_exactly(rule, rng):
    """Stop after 3 steps, save optimizer and scheduler through npz + JSON, rebuild from scratch, load, run
    3 more: the parameters are bit-identical to an uninterrupted 6-step run (float32, two groups)."""
    start = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)]
    grads = [[rng.standard_normal(a.shape).astype(np.float32) for a in start] for _ in range(6)]
    schedule = partial(linear_warmup_linear_decay, total_steps=6, warmup_steps=2)

    def build(arrays):
        params = [Param(a.copy()) for a in arrays]
        groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.003, "weight_decay": 0.0}]
        optimizer = RULES[rule](groups, lr=0.01, weight_decay=0.1)
        return params, optimizer, LRScheduler(optimizer, schedule)

    def run(params, optimizer, scheduler, steps):
        for step_grads in steps:
            for param, grad in zip(params, step_grads, strict=True):
                param.grad = grad
            optimizer.step()
            scheduler.step()

    straight = build(start)
    run(*straight, grads)
    interrupted = build(start)
    run(*interrupted, grads[:3])
    saved_params = [param.data.copy() for param in interrupted[0]]
    saved_optimizer = state_dict_through_npz_and_json(interrupted[1].state_dict())
    saved_scheduler = json.loads(json.dumps(interrupted[2].state_dict()))
    run(*interrupted, grads[3:5])  # steps after saving must not reach into the saved state
    resumed = build(saved_params)
    resumed[1].load_state_dict(saved_optimizer)
    resumed[2].load_state_dict(saved_scheduler)
    run(*resumed, grads[3:])
    for param, reference in zip(resumed[0], straight[0], strict=True):
        np.testing.assert_array_equal(param.data, reference.data)
    assert resumed[1].param_groups[1]["lr"] == straight[1].param_groups[1]["lr"]


def test_load_state_dict_refuses_another_model_and_changes_nothing(rng):
    """A state dict from a model with other shapes, another parameter count or other names is refused with
    CheckpointError, and the optimizer keeps its own state."""
    params = [Param(rng.standard_normal((2, 3)), rng.standard_normal((2, 3)))]
    optimizer = AdamW(params)
    optimizer.step()
    before = optimizer.state_dict()
    other = AdamW([Param(rng.standard_normal((3, 2)), rng.standard_normal((3, 2)))])
    other.step()
    with pytest.raises(CheckpointError, match=r"\(3, 2\)"):
        optimizer.load_state_dict(other.state_dict())
    two = AdamW([Param(np.zeros(2)), Param(np.zeros(2))])
    with pytest.raises(CheckpointError, match="has 2"):
        optimizer.load_state_dict(two.state_dict())
    np.testing.assert_array_equal(optimizer.state[0]["exp_avg"], before["state"][0]["exp_avg"])
    named = bert_optimizer([("a.weight", Param(np.zeros(2)))], lr=0.1, rule="adamw")
    renamed = bert_optimizer([("b.weight", Param(np.zeros(2)))], lr=0.1, rule="adamw")
    with pytest.raises(CheckpointError, match="'a.weight'.*'b.weight'"):
        named.load_state_dict(renamed.state_dict())


@pytest.mark.parametrize(
    ("keywords", "named"),
    [({"lr": -0.1}, "lr=-0.1"), ({"lr": float("nan")}, "lr=nan"), ({"betas": (0.9, 1.0)}, "betas=(0.9, 1.0)"),
     ({"betas": (-0.1, 0.9)}, "betas=(-0.1, 0.9)"), ({"eps": -1e-8}, "eps=-1e-08"),
     ({"weight_decay": -0.01}, "weight_decay=-0.01")],
)
@pytest.mark.parametrize("rule", sorted(RULES))
def test_bad_hyperparameters_are_refused_naming_the_value(rule, keywords, named):
    """Negative lr, eps or weight decay, a NaN lr and betas outside [0, 1) raise ConfigError quoting the
    value, both as optimizer arguments and as a group override."""
    with pytest.raises(ConfigError, match=re.escape(named)):
        RULES[rule]([Param(np.zeros(2))], **keywords)
    with pytest.raises(ConfigError, match=re.escape(named)):
        RULES[rule]([{"params": [Param(np.zeros(2))], **keywords}])


def test_bad_parameter_lists_are_refused():
    """An empty list, the same parameter twice, an integer array, a non-parameter and a gradient of the
    wrong shape each give a clear error."""
    with pytest.raises(ConfigError, match="empty"):
        AdamW([])
    shared = Param(np.zeros(2))
    with pytest.raises(ConfigError, match="more than one"):
        AdamW([{"params": [shared]}, {"params": [shared]}])
    with pytest.raises(TypeError, match="int64"):
        AdamW([Param(np.zeros(2, dtype=np.int64))])
    with pytest.raises(TypeError, match="ndarray|not a parameter"):
        AdamW([np.zeros(2)])
    optimizer = AdamW([Param(np.zeros(2), np.zeros(3))])
    with pytest.raises(ShapeError, match=r"\(3,\)"):
        optimizer.step()


@pytest.mark.parametrize(
    ("variant", "step", "expected"),
    [
        # total 100, warmup 10; Google's decay line runs from (0, 1) to (100, 0), warmup replaces its start.
        ("google", 0, 0.0), ("google", 5, 0.5), ("google", 9, 0.9), ("google", 10, 0.9),
        ("google", 55, 0.45), ("google", 99, 0.01), ("google", 100, 0.0), ("google", 250, 0.0),
        # HuggingFace's decay line runs from (10, 1) to (100, 0): the peak is exactly 1.
        ("huggingface", 0, 0.0), ("huggingface", 5, 0.5), ("huggingface", 10, 1.0),
        ("huggingface", 55, 0.5), ("huggingface", 100, 0.0), ("huggingface", 250, 0.0),
    ],
)
def test_linear_warmup_linear_decay_values(variant, step, expected):
    """The multiplier at step 0, mid-warmup, the peak, mid-decay and the end, worked out by hand."""
    assert linear_warmup_linear_decay(step, 100, 10, variant=variant) == pytest.approx(expected, abs=1e-12)


def test_schedule_without_warmup_and_constant():
    """warmup_steps=0 decays from 1 at step 0 in both variants; `constant` is 1 everywhere."""
    for variant in ("google", "huggingface"):
        assert linear_warmup_linear_decay(0, 4, 0, variant) == 1.0
        assert linear_warmup_linear_decay(3, 4, 0, variant) == 0.25
    assert [constant(step) for step in (0, 1, 10**6)] == [1.0, 1.0, 1.0]


def test_warmup_stable_decay_holds_the_peak_then_cools_down():
    """total 100, warmup 10, decay 20: a ramp to 1 at step 10, 1 through step 80, then down to 0 at 100."""
    values = {step: warmup_stable_decay(step, 100, 10, 20) for step in (0, 5, 10, 50, 80, 90, 99, 100, 250)}
    assert values == pytest.approx({0: 0.0, 5: 0.5, 10: 1.0, 50: 1.0, 80: 1.0, 90: 0.5, 99: 0.05, 100: 0.0,
                                    250: 0.0}, abs=1e-12)
    assert [warmup_stable_decay(step, 4, 0, 0) for step in (0, 3, 4)] == [1.0, 1.0, 0.0]
    with pytest.raises(ConfigError, match="decay_steps=95"):
        warmup_stable_decay(0, 100, 10, 95)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [((-1, 10, 2), "step=-1"), ((0, 0, 0), "total_steps=0"), ((0, 10, 11), "warmup_steps=11"),
     ((0, 10, 2.5), "warmup_steps=2.5"), ((0, 10, 2, "cosine"), "'cosine'")],
)
def test_schedule_refuses_bad_arguments(arguments, named):
    """Negative steps, no total steps, warmup longer than the run, fractional steps and unknown variants raise
    ConfigError naming the value."""
    with pytest.raises(ConfigError, match=named):
        linear_warmup_linear_decay(*arguments)


def test_scheduler_sets_each_groups_lr_from_its_base():
    """LRScheduler scales every group's base lr by the schedule: schedule(0) at once, schedule(k) after k
    calls to step(), and restores its position from a state dict."""
    optimizer = AdamW([{"params": [Param(np.zeros(1))], "lr": 1e-3}, {"params": [Param(np.zeros(1))]}],
                      lr=1e-4)
    scheduler = LRScheduler(optimizer, partial(linear_warmup_linear_decay, total_steps=10, warmup_steps=4,
                                               variant="huggingface"))
    assert scheduler.get_last_lr() == [0.0, 0.0]
    scheduler.step()
    scheduler.step()
    assert scheduler.get_last_lr() == pytest.approx([5e-4, 5e-5])
    saved = scheduler.state_dict()
    for _ in range(5):
        scheduler.step()
    assert scheduler.get_last_lr() == pytest.approx([5e-4, 5e-5])  # step 7 of 10: (10-7)/(10-4)
    scheduler.load_state_dict(saved)
    assert scheduler.get_last_lr() == pytest.approx([5e-4, 5e-5]) and scheduler.step_count == 2
    scheduler.step()
    assert scheduler.get_last_lr() == pytest.approx([7.5e-4, 7.5e-5])
    with pytest.raises(CheckpointError, match="1 base learning rates"):
        scheduler.load_state_dict({"step_count": 0, "base_lrs": [1.0]})


def test_clip_scales_to_max_norm_and_returns_the_norm_before():
    """Gradients (3, 4) and (12,) have global norm √(9+16+144) = 13: clipping to 1 divides both by 13,
    returns 13, and leaves the global norm at 1. Parameters without a gradient are skipped."""
    first = Param(np.zeros(2), np.array([3.0, 4.0]))
    second = Param(np.zeros(1), np.array([12.0]))
    idle = Param(np.zeros(1))
    assert clip_grad_norm([first, idle, second], max_norm=1.0) == pytest.approx(13.0)
    np.testing.assert_allclose(first.grad, [3 / 13, 4 / 13])
    np.testing.assert_allclose(second.grad, [12 / 13])
    assert idle.grad is None
    assert clip_grad_norm([first, second]) == pytest.approx(1.0)


def test_clip_is_a_no_op_at_or_below_the_threshold_and_on_non_finite_norms():
    """A global norm at or below max_norm leaves the gradients bit-identical; a NaN gradient gives a NaN norm
    and nothing is scaled, so the training loop can report it."""
    grad = np.array([0.6, 0.8], dtype=np.float32)
    param = Param(np.zeros(2, dtype=np.float32), grad.copy())
    assert clip_grad_norm([param], max_norm=1.0) == pytest.approx(1.0)
    np.testing.assert_array_equal(param.grad, grad)
    broken = Param(np.zeros(2), np.array([np.nan, 1e3]))
    assert math.isnan(clip_grad_norm([broken]))
    assert broken.grad[1] == 1e3
    with pytest.raises(ConfigError, match="max_norm=0"):
        clip_grad_norm([param], max_norm=0)


@given(st.lists(st.tuples(st.integers(1, 5), st.floats(-3, 3)), min_size=1, max_size=4),
       st.floats(0.1, 10))
def test_clip_keeps_direction_and_caps_the_norm(sizes_and_scales, max_norm):
    """For any gradients, after clipping the global norm is min(norm, max_norm) and each gradient is its old
    value times one common factor (the direction is kept)."""
    rng = np.random.default_rng(len(sizes_and_scales))
    params = [Param(np.zeros(size), rng.standard_normal(size) * 10.0**scale)
              for size, scale in sizes_and_scales]
    before = [param.grad.copy() for param in params]
    norm = clip_grad_norm(params, max_norm)
    assert norm == pytest.approx(math.sqrt(sum(float(np.sum(g**2)) for g in before)))
    factor = min(1.0, max_norm / norm)
    for param, old in zip(params, before, strict=True):
        np.testing.assert_allclose(param.grad, old * factor, rtol=1e-12)


def test_step_allocates_no_memory_proportional_to_the_model():
    """After a first step (which creates the state), an AdamW step on a 2M-entry float32 parameter allocates
    less than 1 MB at its peak: the update runs in place, slice by slice (the parameter is 8 MB)."""
    param = Param(np.ones(2_000_000, dtype=np.float32), np.full(2_000_000, 0.5, dtype=np.float32))
    for rule in (Adam, AdamW, BertAdam):
        optimizer = rule([param], weight_decay=0.01)
        optimizer.step()
        tracemalloc.start()
        optimizer.step()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 1_000_000, f"{rule.__name__} step allocated {peak} bytes"


def golden_cases():
    description = json.loads((GOLDEN / "golden.json").read_text())
    return [(name, dtype) for name in description["cases"] for dtype in ("float32", "float64")]


@pytest.mark.parametrize(("case", "dtype"), golden_cases())
def test_matches_torch_optim_golden_numbers(case, dtype):
    """Adam (with and without its L2 weight decay) and AdamW (torch defaults; two groups with their own lr,
    betas, eps and decay, and gradients missing on some steps) give torch.optim's numbers after each of 5
    steps, and the same final state. Tolerances: float64 rtol 1e-12; float32 rtol 2e-6, atol 3e-7 (torch
    computes the moments with lerp and addcdiv, in another order)."""
    description = json.loads((GOLDEN / "golden.json").read_text())
    spec = description["cases"][case]
    arrays = np.load(GOLDEN / "golden.npz", allow_pickle=False)
    prefix = f"{case}/{dtype}"
    params = [Param(arrays[f"{prefix}/init/param{i}"].copy()) for i in range(len(description["shapes"]))]
    groups = [{**group, "params": [params[i] for i in group["params"]]} for group in spec["groups"]]
    order = [i for group in spec["groups"] for i in group["params"]]  # position in the optimizer -> param
    optimizer = {"Adam": Adam, "AdamW": AdamW}[spec["optimizer"]](groups, **spec["keywords"])
    tolerance = {"rtol": 1e-12, "atol": 0} if dtype == "float64" else {"rtol": 2e-6, "atol": 3e-7}
    for step in range(description["steps"]):
        missing = spec["missing_grads"].get(str(step), [])
        for i, param in enumerate(params):
            param.grad = None if i in missing else arrays[f"{prefix}/step{step}/grad{i}"]
        optimizer.step()
        for i, param in enumerate(params):
            assert param.data.dtype == dtype
            np.testing.assert_allclose(param.data, arrays[f"{prefix}/step{step}/param{i}"], **tolerance)
    for position, i in enumerate(order):
        state = optimizer.state[position]
        assert state["step"] == arrays[f"{prefix}/final/step{i}"]
        np.testing.assert_allclose(state["exp_avg"], arrays[f"{prefix}/final/exp_avg{i}"], **tolerance)
        np.testing.assert_allclose(state["exp_avg_sq"], arrays[f"{prefix}/final/exp_avg_sq{i}"], **tolerance)
