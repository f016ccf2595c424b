"""Exercise warmup_decay (lesson 11): `linear_warmup_linear_decay` in minibert/optim/schedule.py.

A linear ramp from 0 to 1 over warmup_steps, then a linear decay to 0 at total_steps. The two variants
differ in where the decay line starts (see the module docstring). Values worked out by hand for
total_steps = 100, warmup_steps = 10.
"""

import pytest

from minibert.optim import linear_warmup_linear_decay


def multiplier(step, variant):
    return linear_warmup_linear_decay(step, total_steps=100, warmup_steps=10, variant=variant)


@pytest.mark.parametrize("variant", ["google", "huggingface"])
def test_warmup_is_a_ramp_from_zero(variant):
    """Steps 0, 1, 5, 9 of a 10-step warmup: 0, 0.1, 0.5, 0.9."""
    assert [multiplier(s, variant) for s in (0, 1, 5, 9)] == pytest.approx([0.0, 0.1, 0.5, 0.9])


def test_google_decay_line_runs_from_1_at_step_0():
    """Google: 1 - step/total after warmup, so 0.9 right after warmup, 0.45 at step 55, 0.01 at step 99."""
    assert [multiplier(s, "google") for s in (10, 55, 99)] == pytest.approx([0.9, 0.45, 0.01])


def test_huggingface_decay_line_peaks_at_1():
    """HuggingFace: (total - step)/(total - warmup): 1 right after warmup, 0.5 at step 55."""
    assert [multiplier(s, "huggingface") for s in (10, 55, 99)] == pytest.approx([1.0, 0.5, 1 / 90])


@pytest.mark.parametrize("variant", ["google", "huggingface"])
def test_zero_from_total_steps_on(variant):
    """At and after total_steps the multiplier is 0."""
    assert multiplier(100, variant) == 0.0
    assert multiplier(150, variant) == 0.0


@pytest.mark.parametrize("variant", ["google", "huggingface"])
def test_zero_warmup_starts_at_the_full_rate(variant):
    """warmup_steps=0 (no warmup, a valid choice): the multiplier is 1 at step 0, then decays to 0 at
    total_steps (0.5 halfway), with no division by zero."""
    try:
        values = [linear_warmup_linear_decay(step, total_steps=100, warmup_steps=0, variant=variant)
                  for step in (0, 50, 100)]
    except ZeroDivisionError:
        pytest.fail("warmup_steps=0 divided by zero: compute step / warmup_steps only while step < warmup_steps")
    assert values == pytest.approx([1.0, 0.5, 0.0])
