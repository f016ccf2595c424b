"""The clock budget: how many steps a run given `minutes` takes, planned before it starts and again as it
goes, and the checks the loop asks of the clock (out of time? an evaluation due?).

A run planned from the clock times a few forward and backward passes first (`measure_pass_seconds`) and
plans its total from them (`plan_steps`). Those passes, timed near a cold start, can be off by a fifth, and
the machine may speed up or slow down. A run that ends early wastes its budget, and one cut off by the clock
never cools its learning rate down. So `PretrainingClock` plans again from the run's own recent steps, a quarter of
the way in and every REPLAN_EVERY steps after, until the cool-down begins: it proposes a `Plan`, and the
loop takes it (the total, the schedule over it, the step where the long sequences start). Between warmup and
the cool-down the stable-decay schedule is flat, so under the new total the rate goes on at the peak, and a
resumed run (which reads the total from its checkpoint) computes the same rates.
"""

import collections
import contextlib
import math
import time
from dataclasses import dataclass

import numpy as np

from minibert.model import pretraining_loss
from minibert.train.evaluate import forward_batch
from minibert.train.pretraining_config import MINI_STEPS_TO_LEARN
from minibert.train.pretraining_setup import cooldown_start, short_steps_for
from minibert.train.progress import format_duration

# A run planned from the clock plans again every REPLAN_EVERY steps, from the time of its last REPLAN_WINDOW
# steps: about two minutes of the `mini` run, which rides out a minute of a busy machine, while a plan every
# few seconds puts the last one just before the cool-down.
REPLAN_EVERY = 10
REPLAN_WINDOW = 150
STEP_OVER_PASS = 1.15  # a step is a forward and backward pass and about 15% more (clipping, the optimizer, data)


def measure_pass_seconds(model, batch, use_nsp, passes=4):
    """Seconds for one forward and backward pass: the median of the passes after the first, which compiles
    the kernels (the median, not the fastest, since the run's steps are what the plan must fit).

    The passes draw dropout masks, so the random state is put back: measuring must not change the run.
    """
    rng_state = model.rng.bit_generator.state
    times = []
    for _ in range(passes):
        started = time.perf_counter()
        loss, _, _ = pretraining_loss(forward_batch(model, batch), batch["masked_lm_ids"],
                                      batch["masked_lm_weights"], batch["next_sentence_labels"],
                                      use_nsp=use_nsp)
        loss.backward()
        times.append(time.perf_counter() - started)
    model.zero_grad()
    model.rng.bit_generator.state = rng_state
    return float(np.median(times[1:]))


def plan_steps(short_seconds, long_seconds, config, seconds_left, done=0, margin=0.95,
               evaluation_seconds=None):
    """How many steps a run can have in all, `done` of them taken, with `seconds_left` to go.

    short_seconds, long_seconds: one step on the short sequences (None: the run has none) and on the long
    ones. The first `short_share` of the steps are short; every `eval_every` steps comes an evaluation, which
    takes `evaluation_seconds` (when not yet timed: `eval_batches` long batches at about a third of a step
    each). `margin` keeps some time for the unforeseen.
    """
    if evaluation_seconds is None:
        evaluation_seconds = (config.eval_batches or 20) * long_seconds / 3
    evaluation = evaluation_seconds / config.eval_every  # per step
    short_share = config.short_share if short_seconds is not None else 0.0
    short, long = (short_seconds or 0.0) + evaluation, long_seconds + evaluation
    # total T: short steps up to short_share * T, all long after; the `done` ones were short while they
    # could be
    total = (seconds_left * margin + done * short) / (short_share * short + (1 - short_share) * long)
    if short_share * total < done:  # the short steps are over: only long ones are left
        total = done + seconds_left * margin / long
    return max(done + 1, int(total))


def minutes_for_steps(wanted, planned, seconds_left, seconds_fixed):
    """The whole minutes a run would need for `wanted` steps, where `seconds_left` fit `planned` of them and
    `seconds_fixed` (setting up, the final evaluation) do not grow with the steps."""
    return math.ceil((seconds_fixed + seconds_left * wanted / planned) / 60)


class RecentSteps:
    """The wall time of a run's last `size` steps, each counted as the long-sequence step it stands for.

    A step's wall time is how far the run's clock moved since the step before, less the evaluations (they
    are planned apart, `plan_steps`): the step itself, its batch, the logs and the checkpoints. A short step
    counts `short_to_long` times its seconds (what the passes timed before training said a long step costs
    against a short one), so one window spans the switch from short to long sequences."""

    MIN_STEPS = 20  # fewer steps say little about the rest of the run

    def __init__(self, short_to_long, size):
        self.short_to_long = short_to_long
        self.seconds = collections.deque(maxlen=size)
        self.clock = None  # (elapsed seconds, evaluation seconds in all) after the last step

    def start(self, elapsed_seconds, evaluation_seconds):
        self.clock = (elapsed_seconds, evaluation_seconds)

    def add(self, elapsed_seconds, evaluation_seconds, short):
        """After a step (`short`: on the short sequences): the run's clocks now."""
        last_elapsed, last_evaluation = self.clock
        spent = (elapsed_seconds - last_elapsed) - (evaluation_seconds - last_evaluation)
        self.seconds.append(spent * (self.short_to_long if short else 1.0))
        self.clock = (elapsed_seconds, evaluation_seconds)

    def long_step_seconds(self):
        """The mean over the window: what a long step takes now. None with fewer than MIN_STEPS steps."""
        if len(self.seconds) < self.MIN_STEPS:
            return None
        return sum(self.seconds) / len(self.seconds)


@dataclass
class Plan:
    """A new plan for the run, which the loop takes: its total steps, and where its short sequences end."""

    total_steps: int
    short_steps: int
    long_step_seconds: float  # what the run's own recent steps say a long step takes


class PretrainingClock:
    """A run's time: how long it has trained (over every session), its limit, when to evaluate, and, for a
    new run planned from the clock, its plan (`first_plan`, then `replan` when `replan_due`). The clock reads
    the run and changes none of it: it answers and proposes, and the loop assigns."""

    def __init__(self, run, started):
        """run: a `PretrainingRun` (minibert/train/pretraining_run.py); started: `time.perf_counter()` when the
        command started. A new run's clock counts from then, so building the data and compiling the kernels
        come out of the same budget."""
        self.run, config = run, run.config
        self.started = started
        self.pass_seconds = self.short_pass_seconds = None  # measured by `first_plan`
        self.time_limit = None if config.minutes is None else config.minutes * 60 - self.finish_seconds()
        self.recent_steps = self.replan_from = None
        self.evaluation_seconds = None  # how long the last evaluation took
        self.evaluation_seconds_in_all = 0.0  # and all of this session's
        self.last_evaluation_seconds = run.position.elapsed_seconds
        self.session_start = self.elapsed_before = None

    def finish_seconds(self):
        """Time kept for the end of a run: the last evaluation (eval batches at about a third of a pass each),
        the checkpoint, the curves and the examples."""
        return 5.0 + (self.run.config.eval_batches or 20) * (self.pass_seconds or 0.0) / 3

    def first_plan(self, log):
        """The steps that fit in what is left of `minutes`, from the measured speed of warm passes; from a
        quarter of the way in, a stable-decay run plans again (`replan`). Returns the total."""
        run, config = self.run, self.run.config
        self.pass_seconds = measure_pass_seconds(run.model, next(run.train_batches.epoch(0)), config.use_nsp)
        if run.short_batches is not None:  # a short pass is cheaper: attention costs S² per sequence
            self.short_pass_seconds = measure_pass_seconds(run.model, next(run.short_batches.epoch(0)),
                                                           config.use_nsp and config.short_phase_nsp)
        self.time_limit = config.minutes * 60 - self.finish_seconds()
        spent = time.perf_counter() - self.started
        left = self.time_limit - spent
        short = None if self.short_pass_seconds is None else self.short_pass_seconds * STEP_OVER_PASS
        steps = plan_steps(short, self.pass_seconds * STEP_OVER_PASS, config, left)
        log(f"a forward and backward pass takes {self.pass_seconds:.2f} s here; {format_duration(spent)} "
            f"went to setting up, so the rest of the {config.minutes:g} minutes fits about {steps} steps")
        if config.model == "mini" and steps < MINI_STEPS_TO_LEARN:
            minutes = minutes_for_steps(MINI_STEPS_TO_LEARN, steps, left, spent + self.finish_seconds())
            # Only "may": the passes timed at the start, still near a cold start, can be off by a fifth or
            # more, and the run plans again from its own steps (docs/learning.md, "The 15-minute budget").
            log(f"that is fewer than the {MINI_STEPS_TO_LEARN} steps the mini recipe takes to pass 30% held-out "
                f"MLM accuracy (docs/learning.md), so this run may stop short of that (it plans again from its "
                f"own steps as it goes); --minutes {minutes} would fit them on this machine")
        if config.schedule == "stable-decay":
            self.replan_from = max(int(round(max(config.warmup, 0.25) * steps)), 20)
            short_to_long = self.pass_seconds / (self.short_pass_seconds or self.pass_seconds)
            self.recent_steps = RecentSteps(short_to_long, REPLAN_WINDOW)
        return steps

    def start(self):
        """The session's clock starts: a new run's counts from the command's start, set-up included."""
        position = self.run.position
        self.session_start, self.elapsed_before = time.perf_counter(), position.elapsed_seconds
        if position.step == 0:
            self.elapsed_before = self.session_start - self.started
        if self.recent_steps is not None:
            self.recent_steps.start(self.elapsed_before, self.evaluation_seconds_in_all)

    def elapsed(self):
        """The run's training time now, over every session."""
        return self.elapsed_before + time.perf_counter() - self.session_start

    def out_of_time(self):
        return self.time_limit is not None and self.run.position.elapsed_seconds >= self.time_limit

    def seconds_left(self):
        return None if self.time_limit is None else self.time_limit - self.run.position.elapsed_seconds

    def step_taken(self, elapsed_seconds, short):
        """A step ended at `elapsed_seconds` of the run's time (`short`: on the short sequences): a run that
        plans again counts its time."""
        if self.recent_steps is not None:
            self.recent_steps.add(elapsed_seconds, self.evaluation_seconds_in_all, short)

    def evaluation_due(self):
        """With `eval_every_minutes`: has the run's time passed a multiple of it since the last evaluation?"""
        every = self.run.config.eval_every_minutes
        if every is None:
            return False
        return self.run.position.elapsed_seconds // (every * 60) > self.last_evaluation_seconds // (every * 60)

    @contextlib.contextmanager
    def evaluating(self):
        """Around an evaluation: its time is planned apart from the steps' (`plan_steps`)."""
        started = time.perf_counter()
        yield
        self.evaluation_seconds = time.perf_counter() - started
        self.evaluation_seconds_in_all += self.evaluation_seconds
        self.last_evaluation_seconds = self.run.position.elapsed_seconds

    def replan_due(self):
        """Every REPLAN_EVERY steps from `replan_from`, once the window holds enough steps to say what a step
        takes, while the next step's rate is still the peak: the cool-down's rates depend on the total, so
        once it begins the total stays."""
        step = self.run.position.step
        if self.replan_from is None or step < self.replan_from or (step - self.replan_from) % REPLAN_EVERY:
            return False
        if self.recent_steps.long_step_seconds() is None:
            return False
        return step + 1 < cooldown_start(self.run.config, self.run.position.total_steps)

    def replan(self, short_steps):
        """A new `Plan` from the time the run's own recent steps take (the module's docstring), where the
        short sequences now end at `short_steps`."""
        position, config = self.run.position, self.run.config
        long = self.recent_steps.long_step_seconds()
        # a short step costs what the passes timed before training said, against a long one
        short = None if self.short_pass_seconds is None else long * self.short_pass_seconds / self.pass_seconds
        total = plan_steps(short, long, config, self.time_limit - position.elapsed_seconds, position.step,
                           evaluation_seconds=self.evaluation_seconds)
        # The steps taken must keep their learning rates: warmup (a share of the total) must still end by
        # now, and the cool-down must not have begun.
        if config.warmup > 0:
            total = min(total, int(position.step / config.warmup))
        total = max(total, math.ceil((position.step + 1) / (1 - config.decay)))
        if position.step < short_steps:  # still short: the switch moves with the total
            short_steps = max(short_steps_for(config, total), position.step + 1)
        return Plan(total, short_steps, long)
