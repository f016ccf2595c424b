"""The pretraining loop: batch -> model -> pretraining_loss -> backward -> clip -> optimizer.step ->
scheduler.step, over and over, with evaluation, logs and checkpoints around it.

One step (`train_step`) follows docs/design.md: masked-LM loss + NSP loss (paper §3.1), gradients clipped
to global norm 1.0 (Google's optimization.py), then the update. A loss (or gradient) that is not a finite
number stops the run before the update, so the weights and the last checkpoint stay good. Around the
steps, `Pretraining.run` logs, evaluates and checkpoints; Ctrl-C asks the loop to stop after the current
step and save, so an interrupted run resumes exactly (a second Ctrl-C quits at once).
"""

# One step, in the order of docs/design.md:
# 1. the model reads a batch; its MLM head runs on the masked positions only;
# 2. `pretraining_loss` = masked-LM loss + NSP loss (paper §3.1);
# 3. `backward()` fills every parameter's `.grad`;
# 4. the gradients are clipped to global norm 1.0 (Google's optimization.py);
# 5. the optimizer updates the weights, the scheduler sets the next learning rate, the gradients are cleared.
# A non-finite loss stops the run before step 5.
#
# Around the steps, `Pretraining.run` keeps one progress line up to date, appends to the JSONL log every
# `log_every` steps, evaluates on the held-out split every `eval_every` steps (or `eval_every_minutes`), and
# writes a checkpoint every `checkpoint_every` steps.

import collections
import math
import signal
import threading
import time
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

from minibert.data.problems import DataWarning
from minibert.errors import CheckpointError, DataError, MinibertError
from minibert.fast import accelerate, process_plan
from minibert.io.atomic import atomic_write
from minibert.io.overwrite import check_can_write
from minibert.io.pretrained import VOCAB_FILE
from minibert.io.run_lock import RunLock
from minibert.model import pretraining_loss
from minibert.optim import clip_grad_norm
from minibert.tokenizer import BertTokenizer
from minibert.train import run_setup
from minibert.train.checkpointing import (
    CHECKPOINT_FILE,
    RunPosition,
    load_checkpoint,
    remove_partial_files,
    restore,
    save_checkpoint,
)
from minibert.train.evaluate import evaluate, run_model
from minibert.train.fill_mask import masked_examples
from minibert.train.logs import LOG_FILE, RunLog, draw_curves, read_log
from minibert.train.metrics import masked_lm_correct, next_sentence_correct, ratio
from minibert.train.nonfinite import describe_nonfinite
from minibert.train.presets import MINI_STEPS_TO_LEARN
from minibert.train.progress import ProgressLine, format_duration, progress_text
from minibert.viz import sparkline


class TrainingDiverged(MinibertError, ArithmeticError):
    """The loss or the gradient stopped being a finite number."""


@dataclass
class StepResult:
    loss: float
    mlm_loss: float
    nsp_loss: float | None
    mlm_right: int
    mlm_total: int
    nsp_right: int
    nsp_total: int
    grad_norm: float  # before clipping
    lr: float  # the learning rate this step used
    seq_length: int  # tokens per sequence of the batch
    seconds: float = 0.0


@dataclass
class RunResult:
    out_dir: Path
    step: int
    total_steps: int
    stopped: str  # "finished", "time limit", "interrupted", "paused"
    evaluation: object  # the last `Evaluation`, or None


def checked_update(loss, model, parameters, optimizer, scheduler, max_grad_norm, loss_name="loss", advice=""):
    """backward -> clip -> optimizer step -> schedule step, the update every training loop makes.

    A loss or gradient norm that is not finite raises `TrainingDiverged` before any weight changes, naming
    the parameter the NaN or inf came from. Returns the loss value and the gradient norm before clipping.
    """
    value = loss.item()
    if not math.isfinite(value):
        raise TrainingDiverged(f"the {loss_name} is {value}; {describe_nonfinite(model, gradients=False)}{advice}")
    loss.backward()
    grad_norm = clip_grad_norm(parameters, max_grad_norm)
    if not math.isfinite(grad_norm):
        where = describe_nonfinite(model, gradients=True)
        optimizer.zero_grad()
        raise TrainingDiverged(f"the gradient norm is {grad_norm}; {where}{advice}")
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return value, grad_norm


def train_step(model, parameters, optimizer, scheduler, batch, config):
    """One optimizer step on `batch`; returns its `StepResult`. Raises `TrainingDiverged` before changing
    any weight when the loss or the gradient norm is not finite."""
    lr = optimizer.param_groups[0]["lr"]
    output = run_model(model, batch)
    loss, mlm, nsp = pretraining_loss(output, batch["masked_lm_ids"], batch["masked_lm_weights"],
                                      batch["next_sentence_labels"], use_nsp=config.use_nsp)
    value, grad_norm = checked_update(loss, model, parameters, optimizer, scheduler, config.max_grad_norm)
    mlm_right, mlm_total = masked_lm_correct(output.mlm_logits.data, batch["masked_lm_ids"],
                                             batch["masked_lm_weights"])
    nsp_right, nsp_total = next_sentence_correct(output.nsp_logits.data, batch["next_sentence_labels"])
    return StepResult(value, mlm.item(), nsp.item() if nsp is not None else None, mlm_right, mlm_total,
                      nsp_right, nsp_total, grad_norm, lr, batch["input_ids"].shape[1])


def nsp_loss(results):
    """The mean sentence-pair loss of the steps that trained it (None if none did)."""
    trained = [r.nsp_loss for r in results if r.nsp_loss is not None]
    return sum(trained) / len(trained) if trained else None


def nsp_accuracy(results):
    """The sentence-pair accuracy over the steps that trained that loss (None if none did)."""
    trained = [r for r in results if r.nsp_loss is not None]
    return ratio(sum(r.nsp_right for r in trained), sum(r.nsp_total for r in trained)) if trained else None


def batch_stream(batches, epoch, skip):
    """Yield (epoch, index in epoch, batch) from batch `skip` of `epoch` on, epoch after epoch.

    Epoch e's batches and masks depend only on (seed, e), so skipping the used ones replays a stopped
    run's data exactly (masking a batch takes milliseconds, so the skip is quick). An epoch without a single
    batch would make this loop spin forever without yielding, so it is refused."""
    while True:
        count = 0
        for count, batch in enumerate(batches.epoch(epoch), start=1):
            if count > skip:
                yield epoch, count - 1, batch
        if count == 0:
            raise DataError(f"epoch {epoch} of the training data holds no batch; use a smaller --batch-size or "
                            "a larger corpus")
        epoch, skip = epoch + 1, 0


class StopRequest:
    """Turns the first Ctrl-C (SIGINT) into a request to stop after the current step."""

    def __init__(self, notify):
        self.requested = False
        self.notify = notify

    def __enter__(self):
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        self.requested = True
        # A second Ctrl-C quits at once (Python's default: KeyboardInterrupt).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.notify("Ctrl-C: stopping after this step and saving a checkpoint (Ctrl-C again to quit now)")

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


# A run planned from the clock plans again every REPLAN_EVERY steps, from the time of its last REPLAN_WINDOW
# steps: about two minutes of the `mini` run, which rides out a minute of a busy machine, while a plan every
# few seconds puts the last one just before the cool-down.
REPLAN_EVERY = 10
REPLAN_WINDOW = 150


class Pretraining:
    """One run in `out_dir`: builds (or restores) everything in `__init__`, trains in `run()`."""

    def __init__(self, config, out_dir, resume=False, overrides=None, data_dir=None, progress=None,
                 log=print, overwrite=False, started=None):
        """config: a `RunConfig`. To resume, config may be None: the checkpoint's settings are used, with
        `overrides` ({field: value}) applied; settings that decide the run's numbers cannot change.
        overwrite: start afresh in a folder that holds another run or files of the user's.
        started: `time.perf_counter()` when the command started (default: now). A new run's `minutes`
        count from then, so building the data and compiling the kernels come out of the same budget.

        The folder is locked (io/run_lock.py) from here until `run` ends, so two runs never mix in it."""
        self.started = time.perf_counter() if started is None else started
        self.out_dir = Path(out_dir)
        self.log = log
        self.progress = progress or ProgressLine()
        self.checkpoint_path = self.out_dir / CHECKPOINT_FILE
        self.lock = RunLock(self.out_dir).acquire()
        weakref.finalize(self, self.lock.release)  # a run built but never run still frees its folder
        try:
            self._set_up(config, resume, overrides, data_dir, overwrite)
        except BaseException:
            self.lock.release()
            raise

    def _set_up(self, config, resume, overrides, data_dir, overwrite):
        checkpoint = self._checkpoint_to_resume(resume, overwrite)
        if checkpoint is not None:
            asked = config.to_dict() if config is not None else (overrides or {})
            config = run_setup.config_for_resume(checkpoint.run_config, asked)
        self.config = config
        self.shard_dir, vocab_path, self.data_fingerprint = run_setup.prepare_data(config, data_dir, self.log)
        self.tokenizer = BertTokenizer(vocab_path)
        self.train_batches, self.eval_batches = run_setup.open_batches(self.shard_dir, config)
        self.short_batches = None  # the training batches of the short-sequence steps, if the run has them
        if config.short_phase() is not None:
            with warnings.catch_warnings():
                # Cutting long sentences is the point of the short sequences, not a problem with the data.
                warnings.simplefilter("ignore", DataWarning)
                short_dir, _, short_fingerprint = run_setup.prepare_data(config.short_phase(), data_dir,
                                                                         self.log)
            self.short_batches, _ = run_setup.open_batches(short_dir, config.short_phase())
            self.data_fingerprint["short_rows"] = short_fingerprint["rows"]
        self.model = run_setup.build_model(config, self.tokenizer.vocab_size)
        if not config.plain:
            accelerate(self.model, prune_last_layer=True)
        self.parameters = self.model.parameters()
        self.optimizer = run_setup.build_optimizer(self.model, config)
        self.run_log = RunLog(self.out_dir / LOG_FILE)
        if checkpoint is None:
            self.position = RunPosition(total_steps=config.steps or self._planned_steps(config))
            # An attempt killed before its first checkpoint left the log of steps now lost, and perhaps half
            # a checkpoint: this run starts from nothing, so they go.
            remove_partial_files(self.out_dir)
            self.run_log.path.unlink(missing_ok=True)
            (self.out_dir / CHECKPOINT_FILE).unlink(missing_ok=True)  # only there with overwrite=True
            self._copy_vocabulary(vocab_path)
        else:
            run_setup.check_same_run(checkpoint, self.model, self.data_fingerprint, self.checkpoint_path)
            self.position = checkpoint.position
            if not (self.out_dir / VOCAB_FILE).is_file():  # deleted: the data's is the same (same sha256)
                self._copy_vocabulary(vocab_path)
                self.log(f"restored {self.out_dir / VOCAB_FILE} from {vocab_path}")
        self.scheduler = run_setup.build_scheduler(self.optimizer, config, self.position.total_steps)
        self.short_steps = round(config.short_share * self.position.total_steps) if self.short_batches else 0
        # A new run planned from the clock plans again from the time its own steps take: a quarter of the
        # way in, then every REPLAN_EVERY steps until its cool-down begins (`_replan`, `_planned_steps`).
        self.replan_from, self.recent_steps = None, None
        if checkpoint is None and config.steps is None and config.schedule == "stable-decay":
            self.replan_from = max(int(round(max(config.warmup, 0.25) * self.position.total_steps)), 20)
            short_to_long = self.pass_seconds / (self.short_pass_seconds or self.pass_seconds)
            self.recent_steps = run_setup.RecentSteps(short_to_long, REPLAN_WINDOW)
        self.evaluation_seconds = None  # how long the last evaluation took
        self.evaluation_seconds_in_all = 0.0  # and all of this session's
        if checkpoint is not None:
            restore(checkpoint, self.model, self.optimizer, self.scheduler)
            remove_partial_files(self.out_dir)
            self.run_log.drop_after(self.position.step)
        self.last_checkpoint_step = checkpoint.position.step if checkpoint else None
        self.evaluation = None  # the last `Evaluation`, its step and its time
        self.last_evaluation_step, self.last_evaluation_seconds = None, self.position.elapsed_seconds

    def _copy_vocabulary(self, vocab_path):
        """The data's vocab.txt into the run folder, where fill-mask and attention read it."""
        with atomic_write(self.out_dir / VOCAB_FILE) as file:
            file.write(Path(vocab_path).read_bytes())

    def _checkpoint_to_resume(self, resume, overwrite):
        exists = self.checkpoint_path.is_file()
        if resume and not exists:
            raise CheckpointError(f"no checkpoint to resume in {self.out_dir} ({CHECKPOINT_FILE} is "
                                  "missing); start the run without --resume")
        if not resume and exists and not overwrite:
            raise CheckpointError(f"{self.out_dir} already holds a run; continue it with --resume, or start "
                                  "a new one in another folder (--out DIR), or over this one with --overwrite")
        if not resume and not overwrite and not self._holds_a_dead_attempt():
            for name in (LOG_FILE, VOCAB_FILE):
                check_can_write(self.out_dir / name, overwrite, "--out")
        return load_checkpoint(self.checkpoint_path) if resume else None

    def _holds_a_dead_attempt(self):
        """Whether the folder's log.jsonl and vocab.txt are a run's of ours that died before its first
        checkpoint (its lock was stale, or its log starts as our logs do), not files of the user's."""
        if self.lock.took_over:
            return True
        records = read_log(self.out_dir / LOG_FILE)
        return bool(records) and records[0].get("kind") == "start" and "config" in records[0]

    def _planned_steps(self, config):
        """Steps that fit in what is left of `minutes`, from the measured speed of warm passes."""
        if True:
            self.pass_seconds = run_setup.measure_pass_seconds(self.model, next(self.train_batches.epoch(0)),
                                                               config.use_nsp)
            self.short_pass_seconds = None
            if self.short_batches is not None:  # a short pass is cheaper: attention costs S² per sequence
                self.short_pass_seconds = run_setup.measure_pass_seconds(
                    self.model, next(self.short_batches.epoch(0)), config.use_nsp and config.short_phase_nsp)
        spent = time.perf_counter() - self.started
        left = config.minutes * 60 - spent - self._finish_seconds()
        # a step is a pass and about 15% more (clipping, the optimizer, the next batch)
        short = None if self.short_pass_seconds is None else self.short_pass_seconds * 1.15
        steps = run_setup.plan_steps(short, self.pass_seconds * 1.15, config, left)
        self.log(f"a forward and backward pass takes {self.pass_seconds:.2f} s here; {format_duration(spent)} "
                 f"went to setting up, so the rest of the {config.minutes:g} minutes fits about {steps} steps")
        if config.model == "mini" and steps < MINI_STEPS_TO_LEARN:
            minutes = run_setup.minutes_for_steps(MINI_STEPS_TO_LEARN, steps, left,
                                                  spent + self._finish_seconds())
            # Only "may": the passes timed at the start, still near a cold start, can be off by a fifth or
            # more, and the run plans again from its own steps (docs/learning.md, "The 15-minute budget").
            self.log(f"that is fewer than the {MINI_STEPS_TO_LEARN} steps the mini recipe takes to pass 30% "
                     f"held-out MLM accuracy (docs/learning.md), so this run may stop short of that (it plans "
                     f"again from its own steps as it goes); --minutes {minutes} would fit them on this machine")
        return steps

    def _replan_due(self):
        """Every REPLAN_EVERY steps from `replan_from`, while the next step's rate is still the peak: the
        cool-down's rates depend on the total, so once it begins the total stays."""
        step = self.position.step
        if self.replan_from is None or step < self.replan_from or (step - self.replan_from) % REPLAN_EVERY:
            return False
        return step + 1 < run_setup.cooldown_start(self.config, self.position.total_steps)

    def _replan(self, time_limit):
        """Plan the run's length again from the time its own steps take.

        The passes timed before training may be off by a fifth (caches, other programs), and the machine
        may speed up or slow down as the run goes on. A run that ends early wastes its budget, and one cut
        off by the clock never cools its learning rate down. So the run plans again and again from its
        recent steps, until its cool-down begins. Between warmup and the cool-down the stable-decay schedule
        is flat, so under the new total the rate goes on at the peak, and a resumed run (which reads the
        total from its checkpoint) computes the same rates."""
        position, config = self.position, self.config
        long = self.recent_steps.long_step_seconds()
        if long is None:
            return
        # a short step costs what the passes timed before training said, against a long one
        short = None if self.short_pass_seconds is None else long * self.short_pass_seconds / self.pass_seconds
        planned = position.total_steps
        total = run_setup.plan_steps(short, long, config, time_limit - position.elapsed_seconds, position.step,
                                     evaluation_seconds=self.evaluation_seconds)
        # The steps taken must keep their learning rates: warmup (a share of the total) must still end by
        # now, and the cool-down must not have begun.
        if config.warmup > 0:
            total = min(total, int(position.step / config.warmup))
        position.total_steps = max(total, math.ceil((position.step + 1) / (1 - config.decay)))
        self.scheduler.schedule = run_setup.schedule_for(config, position.total_steps)
        if self.short_batches and position.step < self.short_steps:  # still short: the switch moves too
            self.short_steps = max(round(config.short_share * position.total_steps), position.step + 1)
        self.run_log.write("plan", step=position.step, total_steps=position.total_steps, planned=planned,
                           long_step_seconds=long)
        if position.step == self.replan_from or abs(position.total_steps - planned) >= 0.01 * planned:
            self.progress.message(f"step {position.step}: a {config.max_seq_length}-token step takes "
                                  f"{long:.2f} s here, so the run plans {position.total_steps} steps in all "
                                  f"(it planned {planned})")

    def _finish_seconds(self):
        """Time kept for the end of a run: the last evaluation (eval batches at about a third of a pass each),
        the checkpoint, the curves and the examples."""
        return 5.0 + (self.config.eval_batches or 20) * getattr(self, "pass_seconds", 0.0) / 3

    # ----- the loop -----
    def run(self, stop_after_steps=None, show_examples=True):
        """Train until the planned steps are done, the time is up, Ctrl-C, or `stop_after_steps` steps
        have been taken in all (a pause: the run can be resumed). Returns a `RunResult`. The folder's lock
        is released at the end, however the run ends."""
        try:
            return self._train(stop_after_steps, show_examples)
        finally:
            self.lock.release()

    def _train(self, stop_after_steps, show_examples):
        config, position = self.config, self.position
        kind = "resume" if position.step else "start"
        self.run_log.write(kind, step=position.step, total_steps=position.total_steps,
                           config=config.to_dict(), model=self.model.config.to_dict(),
                           parameters=self.model.num_parameters())
        self.log(f"{kind} {self.out_dir}: {self.model!r}, step {position.step} of {position.total_steps}")
        stream = self._batch_stream()
        recent = collections.deque(maxlen=max(config.log_every, 20))
        window = []
        session_start, elapsed_before = time.perf_counter(), position.elapsed_seconds
        if position.step == 0:  # a new run's clock started with the command, set-up included
            elapsed_before = session_start - self.started
        if self.recent_steps is not None:
            self.recent_steps.start(elapsed_before, self.evaluation_seconds_in_all)
        time_limit = None if config.minutes is None else config.minutes * 60 - self._finish_seconds()
        stopped = "finished"
        short_step_config = config if config.short_phase_nsp else config.replace(use_nsp=False)
        with StopRequest(self.progress.message) as stop:
            while position.step < position.total_steps:
                if stop.requested:
                    stopped = "interrupted"
                elif time_limit is not None and position.elapsed_seconds >= time_limit:
                    stopped = "time limit"
                elif stop_after_steps is not None and position.step >= stop_after_steps:
                    stopped = "paused"
                if stopped != "finished":
                    break
                epoch, index, batch = next(stream)
                started = time.perf_counter()
                try:
                    result = train_step(self.model, self.parameters, self.optimizer, self.scheduler, batch,
                                        short_step_config if position.step < self.short_steps else config)
                except TrainingDiverged as error:
                    raise self._diverged(error) from None
                result.seconds = time.perf_counter() - started
                position.step += 1
                position.epoch, position.batches_into_epoch = epoch, index + 1
                if position.step == self.short_steps:  # the short sequences are done: the long ones start
                    position.epoch, position.batches_into_epoch = 0, 0
                    stream = self._batch_stream()
                    self.progress.message(f"step {position.step}: from {config.short_seq_length}-token to "
                                          f"{config.max_seq_length}-token sequences")
                position.elapsed_seconds = elapsed_before + time.perf_counter() - session_start
                recent.append(result)
                if self.recent_steps is not None:
                    self.recent_steps.add(position.elapsed_seconds, self.evaluation_seconds_in_all,
                                          short=position.step <= self.short_steps)
                if self._replan_due():
                    self._replan(time_limit)
                window.append(result)
                self._show_progress(recent, time_limit)
                if position.step % config.log_every == 0 or position.step == position.total_steps:
                    self._log_window(window)
                    window = []
                if position.step % config.eval_every == 0 or self._evaluation_due():
                    self._evaluate()
                if position.step % config.checkpoint_every == 0:
                    self._save()
        if window:
            self._log_window(window)
        return self._finish(stopped, show_examples)

    def _batch_stream(self):
        """The training batches from the run's position on: short sequences for the first `short_steps`."""
        position = self.position
        batches = self.short_batches if position.step < self.short_steps else self.train_batches
        return batch_stream(batches, position.epoch, position.batches_into_epoch)

    def _evaluation_due(self):
        """With `eval_every_minutes`: has the run's time passed a multiple of it since the last evaluation?"""
        every = self.config.eval_every_minutes
        if every is None:
            return False
        last = self.last_evaluation_seconds
        return self.position.elapsed_seconds // (every * 60) > last // (every * 60)

    def _show_progress(self, recent, time_limit):
        position = self.position
        seconds = sum(result.seconds for result in recent) / len(recent)
        eta = seconds * (position.total_steps - position.step)
        if time_limit is not None:
            eta = min(eta, time_limit - position.elapsed_seconds)
        nsp = nsp_accuracy(recent)
        tokens = self.config.batch_size * self.config.max_seq_length
        self.progress.update(progress_text(
            position.step, position.total_steps, sum(r.loss for r in recent) / len(recent),
            ratio(sum(r.mlm_right for r in recent), sum(r.mlm_total for r in recent)), nsp,
            recent[-1].lr, tokens / seconds, eta))

    def _log_window(self, window):
        """One "train" record: the averages over the steps since the last record."""
        count = len(window)
        tokens = self.config.batch_size * self.config.max_seq_length * count
        self.run_log.write(
            "train", step=self.position.step, epoch=self.position.epoch,
            loss=sum(r.loss for r in window) / count, mlm_loss=sum(r.mlm_loss for r in window) / count,
            nsp_loss=nsp_loss(window),
            mlm_accuracy=ratio(sum(r.mlm_right for r in window), sum(r.mlm_total for r in window)),
            nsp_accuracy=nsp_accuracy(window),
            lr=window[-1].lr, grad_norm=window[-1].grad_norm, seq_length=window[-1].seq_length,
            tokens_per_second=tokens / sum(r.seconds for r in window),
            elapsed=self.position.elapsed_seconds, losses=[r.loss for r in window])

    def _evaluate(self):
        if self.eval_batches is None:
            return
        started = time.perf_counter()
        self.evaluation = evaluate(self.model, self.eval_batches, self.config.eval_batches,
                                   self.config.use_nsp)
        self.evaluation_seconds = time.perf_counter() - started
        self.evaluation_seconds_in_all += self.evaluation_seconds
        self.last_evaluation_step = self.position.step
        self.last_evaluation_seconds = self.position.elapsed_seconds
        self.run_log.write("eval", step=self.position.step, elapsed=self.position.elapsed_seconds,
                           **self.evaluation.to_dict())
        when = format_duration(self.position.elapsed_seconds)
        self.progress.message(f"step {self.position.step} ({when}): {self.evaluation.summary()}")

    def _save(self):
        save_checkpoint(self.checkpoint_path, self.model, self.optimizer, self.scheduler, self.config,
                        self.position, self.data_fingerprint)
        self.last_checkpoint_step = self.position.step

    def _diverged(self, error):
        step = self.position.step + 1
        self.progress.close()
        self.run_log.write("diverged", step=step, reason=str(error))
        where = (f"the last good checkpoint is {self.checkpoint_path} (step {self.last_checkpoint_step})"
                 if self.last_checkpoint_step is not None else "no checkpoint was written yet")
        return TrainingDiverged(
            f"step {step}: {error}, so training stopped before changing the weights; {where}. The learning "
            f"rate may be too high for this model: start a new run with a lower one "
            f"(e.g. --lr {self.config.lr / 2:g}).")

    def _finish(self, stopped, show_examples):
        position = self.position
        if self.last_checkpoint_step != position.step:
            self._save()
        if self.eval_batches is not None and self.last_evaluation_step != position.step:
            self._evaluate()
        self.progress.close()
        self.run_log.write("end", step=position.step, stopped=stopped, elapsed=position.elapsed_seconds)
        records = read_log(self.run_log.path)
        curves = draw_curves(records, self.out_dir)
        losses = [loss for record in records if record["kind"] == "train" for loss in record["losses"]]
        self.log(f"{stopped} at step {position.step} of {position.total_steps} after "
                 f"{format_duration(position.elapsed_seconds)}; checkpoint {self.checkpoint_path}")
        if losses:
            self.log(f"loss {losses[0]:.2f} -> {losses[-1]:.2f}  {sparkline(losses, width=60)}")
        if curves:
            self.log("curves: " + ", ".join(str(path) for path in curves))
        if position.step < position.total_steps:
            self.log(f"continue with: --resume --out {self.out_dir}")
        if show_examples and self.eval_batches is not None:
            self.log("how the model fills masks in held-out text:")
            for line in masked_examples(self.model, self.tokenizer, next(self.eval_batches.epoch(0))):
                self.log(line)
        return RunResult(self.out_dir, position.step, position.total_steps, stopped, self.evaluation)


def pretrain(config, out_dir, resume=False, overrides=None, data_dir=None, stop_after_steps=None,
             show_examples=True, progress=None, log=print, overwrite=False, started=None):
    """Pretrain BERT as `config` says, in the run folder `out_dir`; see `Pretraining`."""
    threads = config.threads if config is not None else (overrides or {}).get("threads")
    with process_plan(threads):
        run = Pretraining(config, out_dir, resume=resume, overrides=overrides, data_dir=data_dir,
                          progress=progress, log=log, overwrite=overwrite, started=started)
        return run.run(stop_after_steps=stop_after_steps, show_examples=show_examples)
