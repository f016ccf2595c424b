"""Learning-rate schedules: a multiplier of the base learning rate for each update.

BERT warms the learning rate up linearly from 0, then decays it linearly to 0 (the paper, appendix A.2).
Warmup matters most for BERT's Adam, which has no bias correction (see `adam.py`). Google's code and
HuggingFace's draw the decay differently, and the lesson on schedules draws both:
    "google"       the decay line runs from 1 at step 0 to 0 at `total_steps`; warmup replaces its start, so
                   right after warmup the multiplier is 1 - warmup_steps/total_steps (`optimization.py`).
    "huggingface"  the decay line runs from 1 at `warmup_steps` to 0 at `total_steps`, so the peak is 1
                   (`get_linear_schedule_with_warmup`).
"""

import numbers

from minibert.errors import CheckpointError, ConfigError
from minibert.validation import check_whole, is_number

VARIANTS = ("google", "huggingface")


def linear_warmup_linear_decay(step, total_steps, warmup_steps, variant="google"):
    """The learning-rate multiplier for update number `step` (0-based): a ramp up, then a ramp down to 0."""
    check_whole("step", step, meaning="the number of updates already made")
    check_whole("total_steps", total_steps, meaning="the number of updates in the whole run")
    check_whole("warmup_steps", warmup_steps, meaning="often 10% of total_steps (BERT: 10,000 of 1,000,000)")
    if total_steps == 0 or warmup_steps > total_steps:
        raise ConfigError(f"total_steps={total_steps} and warmup_steps={warmup_steps}: a schedule needs "
                          "total_steps >= 1 and warmup_steps <= total_steps")
    if variant not in VARIANTS:
        raise ConfigError(f"variant={variant!r} is not a schedule variant; choose one of {VARIANTS}")
    # BEGIN EXERCISE warmup_decay: ramp step/warmup_steps, then each variant's line down to 0 at total_steps
    if step < warmup_steps:
        return step / warmup_steps
    if step >= total_steps:
        return 0.0
    if variant == "google":
        return 1.0 - step / total_steps
    return (total_steps - step) / (total_steps - warmup_steps)
    # END EXERCISE


def warmup_stable_decay(step, total_steps, warmup_steps, decay_steps):
    """A ramp up over `warmup_steps`, the full rate until the last `decay_steps`, then a ramp down to 0.

    For runs of a few hundred steps the linear decay of BERT spends most of the run below half the peak
    rate; holding the peak and cooling down at the end (Hägele et al. 2024, "Scaling laws and compute-optimal
    training beyond fixed training durations") keeps the rate up while the model still learns fast."""
    check_whole("step", step, meaning="the number of updates already made")
    check_whole("decay_steps", decay_steps, meaning="often 20% of total_steps")
    if warmup_steps + decay_steps > total_steps:
        raise ConfigError(f"warmup_steps={warmup_steps} and decay_steps={decay_steps} do not fit in "
                          f"total_steps={total_steps}")
    if step < warmup_steps:
        return step / warmup_steps
    return min(1.0, max(0.0, (total_steps - step) / decay_steps)) if decay_steps else float(step < total_steps)


def constant(step):
    """The multiplier 1 at every step: the learning rate stays as given."""
    check_whole("step", step, meaning="the number of updates already made")
    return 1.0


# The paper, appendix A.2: "learning rate warmup over the first 10,000 steps, and linear decay". Without
# warmup, the first updates of BERT's Adam would be too large. Google's "right after warmup" multiplier is
# never quite 1: `optimization.py` applies polynomial_decay with power 1, then the warmup override.
# `step` counts the updates already made, from 0: the first update uses `multiplier(0)`.
# `LRScheduler` applies a schedule to an optimizer's groups, as PyTorch's `LambdaLR` does:
#     schedule = partial(linear_warmup_linear_decay, total_steps=1000, warmup_steps=100)
#     scheduler = LRScheduler(optimizer, schedule)
#     for batch in batches:
#         ...; optimizer.step(); scheduler.step()
class LRScheduler:
    """Sets each group's lr to its base lr times `schedule(step)`; call `.step()` after `optimizer.step()`.

    The base learning rates are the groups' "lr" when the scheduler is made. Building the scheduler sets
    the rate of the first update, `schedule(0)`.
    """

    def __init__(self, optimizer, schedule):
        self.optimizer = optimizer
        self.schedule = schedule
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.step_count = 0
        self._apply()

    def step(self):
        """Move to the next update and set its learning rate."""
        # BEGIN EXERCISE scheduler_step: count the update just made, then set the rate of the next one
        self.step_count += 1
        self._apply()
        # END EXERCISE

    def get_last_lr(self):
        """The learning rate of each group for the coming update (for the progress line)."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """The step count and the base learning rates: plain numbers, ready for JSON."""
        return {"step_count": self.step_count, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state_dict):
        """Continue where a saved scheduler stopped; the schedule function itself comes from the config."""
        base_lrs = state_dict.get("base_lrs") if isinstance(state_dict, dict) else None
        if base_lrs is None or "step_count" not in state_dict:
            raise CheckpointError("a scheduler state dict needs 'step_count' and 'base_lrs'")
        if not isinstance(base_lrs, list | tuple) or not all(is_number(lr) for lr in base_lrs):
            raise CheckpointError(f"base_lrs={base_lrs!r:.80} in the scheduler state is not a list of "
                                  "learning rates; the checkpoint is damaged")
        if len(base_lrs) != len(self.optimizer.param_groups):
            raise CheckpointError(f"the scheduler state has {len(base_lrs)} base learning rates but the "
                                  f"optimizer has {len(self.optimizer.param_groups)} groups")
        step_count = state_dict["step_count"]
        if not isinstance(step_count, numbers.Integral) or step_count < 0:
            raise CheckpointError(f"step_count={step_count!r} in the scheduler state is not a whole "
                                  "number >= 0")
        self.base_lrs = [float(lr) for lr in base_lrs]
        self.step_count = int(step_count)
        self._apply()

    def _apply(self):
        # BEGIN EXERCISE scheduler_apply: every group's lr = its base lr times schedule(step_count)
        multiplier = self.schedule(self.step_count)
        for group, base_lr in zip(self.optimizer.param_groups, self.base_lrs, strict=True):
            group["lr"] = base_lr * multiplier
        # END EXERCISE

