"""The pretraining loop, in one function that reads top to bottom (nanoGPT's train.py is the model):
evaluate and checkpoint when due, stop when it is time, else take a step (get a batch -> forward -> loss ->
backward -> clip -> optimizer step -> schedule step) and log it, over and over.

The loop assigns all of its own state: the position in the run and in the data, the plan (how many steps,
where the short sequences end, the schedule over them) and the last evaluation. What is not the loop is in
small named helpers it calls and whose answers it takes: the run's folder, data, model and checkpoint
(pretraining_run.py `open_run`), the step (update.py `train_step`), held-out evaluation (evaluate.py `evaluate`), the
clock budget (step_plan.py `PretrainingClock`, which proposes plans and changes nothing), Ctrl-C (interrupt.py
`StopRequest`), and the speed layer (minibert/fast), asked for in one visible line. An interrupted run
resumes exactly.
"""

import collections
import contextlib
import time

from minibert import fast
from minibert.train.evaluate import evaluate
from minibert.train.interrupt import StopRequest, how_it_stopped
from minibert.train.metrics import ratio
from minibert.train.pretraining_run import open_run
from minibert.train.pretraining_setup import schedule_for, short_steps_for
from minibert.train.progress import ProgressLine, format_duration, progress_text
from minibert.train.step_plan import PretrainingClock
from minibert.train.update import TrainingDiverged, train_step


def pretrain(config, out_dir, resume=False, overrides=None, data_dir=None, stop_after_steps=None,
             show_examples=True, progress=None, log=print, overwrite=False, started=None):
    """Pretrain BERT as `config` (a PretrainingConfig) says, in the run folder `out_dir`; returns a `PretrainingResult`.

    Training stops when the planned steps are done, the time is up, on Ctrl-C, or after `stop_after_steps`
    steps in all (a pause); each way leaves a checkpoint that `resume=True` continues bit for bit (config
    may then be None, with `overrides` for the settings that change no number). `started`:
    `time.perf_counter()` when the command started (default: now); a new run's minutes count from then.
    """
    started = time.perf_counter() if started is None else started
    progress = progress or ProgressLine()
    run = open_run(config, out_dir, resume, overrides, data_dir, overwrite, log)  # locks the folder
    config, model, optimizer, position = run.config, run.model, run.optimizer, run.position
    if not config.plain:  # the speed layer: the same numbers in fewer passes over memory (minibert/fast)
        fast.accelerate(model, prune_last_layer=True)
        log("speed layer on: fused layers, the pruned last layer, the threads plan (minibert/fast; --plain: off)")
    threads = fast.process_plan(config.threads) if not config.plain else contextlib.nullcontext()
    try:
        with threads, StopRequest(progress.message) as stop:
            clock = PretrainingClock(run, started)
            position.total_steps = position.total_steps or clock.first_plan(log)  # or the checkpoint's
            run.start_schedule(position.total_steps)
            scheduler, parameters = run.scheduler, model.parameters()
            short_steps = short_steps_for(config, position.total_steps)  # the first steps, on short sequences
            kind = "resume" if position.step else "start"
            run.log.write(kind, step=position.step, total_steps=position.total_steps, config=config.to_dict(),
                          model=model.config.to_dict(), parameters=model.num_parameters(), corpus=run.corpus)
            log(f"{kind} {run.out_dir}: {model!r}, step {position.step} of {position.total_steps}")
            batches = run.batches(short=position.step < short_steps)
            recent, window = collections.deque(maxlen=max(config.log_every, 20)), []
            first_step, evaluation = position.step, None  # this session's first step, its last evaluation
            clock.start()
            while True:
                stopped = stop_reason(position, stop, clock, stop_after_steps)  # None: train on
                # Every so many steps, and at the last step however the run ended: log, evaluate on held-out
                # documents, checkpoint. Nothing is due where a session starts: at step 0, or at the step the
                # session before saved.
                stepped = position.step > first_step
                if window and (stopped or position.step % config.log_every == 0):
                    run.log.write("train", **train_record(run, window))
                    window = []
                if run.eval_batches is not None and (stopped or clock.evaluation_due()
                                                     or stepped and position.step % config.eval_every == 0):
                    with clock.evaluating():  # its time is planned apart from the steps'
                        evaluation = evaluate(model, run.eval_batches, config.eval_batches, config.use_nsp)
                    run.log.write("eval", step=position.step, elapsed=position.elapsed_seconds,
                                  **evaluation.to_dict())
                    progress.message(f"step {position.step} ({format_duration(position.elapsed_seconds)}): "
                                     f"{evaluation.summary()}")
                    run.log_guesses()  # what the model writes in a few held-out blanks, for the report
                    run.write_report()  # report.html, rewritten from the whole log
                if (stopped and run.last_checkpoint_step != position.step
                        or stepped and position.step % config.checkpoint_every == 0):
                    run.save()
                if stopped:
                    break
                # 1. a batch: Google's features, its masked positions chosen (minibert/data); the short steps
                # train on short sequences, without the sentence-pair loss unless asked
                short = position.step < short_steps
                epoch, index, batch = next(batches)
                # 2.-7. forward, loss, backward, clip, the optimizer step, the next step's learning rate
                try:  # refused before any weight changes when the loss or the gradient is not finite
                    result = train_step(model, parameters, optimizer, scheduler, batch, run.step_config(short))
                except TrainingDiverged as error:
                    raise diverged(run, error, progress) from None
                position.step += 1
                position.epoch, position.batches_into_epoch = epoch, index + 1
                if position.step == short_steps:  # the short sequences are done: the long ones start
                    position.epoch, position.batches_into_epoch = 0, 0
                    batches = run.batches(short=False)
                    progress.message(f"step {position.step}: from {config.short_seq_length}-token to "
                                     f"{config.max_seq_length}-token sequences")
                position.elapsed_seconds = clock.elapsed()
                clock.step_taken(position.elapsed_seconds, short)
                if clock.replan_due():  # a run planned from the clock plans again from its own steps
                    plan = clock.replan(short_steps)
                    show_plan(run, plan, clock, progress)
                    position.total_steps, short_steps = plan.total_steps, plan.short_steps
                    # the new total moves the cool-down; the rates of the steps taken, and the next, stay
                    scheduler.schedule = schedule_for(config, position.total_steps)
                recent.append(result)
                window.append(result)
                show_progress(progress, run, clock, recent)
        progress.close()
        return run.finish(stopped, evaluation, show_examples, log)
    except BaseException as error:  # a second Ctrl-C, a diverged step, any error: the report says so
        run.record_the_end(how_it_stopped(error, TrainingDiverged))
        raise
    finally:
        run.lock.release()


def stop_reason(position, stop, clock, stop_after_steps):
    """Why the run stops before its next step ("finished", "interrupted", "time limit", "paused"), or None."""
    if position.step >= position.total_steps:
        return "finished"
    if stop.requested:
        return "interrupted"
    if clock.out_of_time():
        return "time limit"
    if stop_after_steps is not None and position.step >= stop_after_steps:
        return "paused"
    return None


def show_plan(run, plan, clock, progress):
    """A new plan: a "plan" log record, and a line when it is the first or moves the total by 1% or more."""
    position, planned = run.position, run.position.total_steps
    run.log.write("plan", step=position.step, total_steps=plan.total_steps, planned=planned,
                  short_steps=plan.short_steps, long_step_seconds=plan.long_step_seconds)
    if position.step == clock.replan_from or abs(plan.total_steps - planned) >= 0.01 * planned:
        progress.message(f"step {position.step}: a {run.config.max_seq_length}-token step takes "
                         f"{plan.long_step_seconds:.2f} s here, so the run plans {plan.total_steps} steps in all "
                         f"(it planned {planned})")


def show_progress(progress, run, clock, recent):
    """The progress line: loss, accuracies, rate and speed of the recent steps, and the time to go."""
    position, config = run.position, run.config
    seconds = sum(result.seconds for result in recent) / len(recent)
    eta = seconds * (position.total_steps - position.step)
    if clock.time_limit is not None:
        eta = min(eta, clock.seconds_left())
    tokens = config.batch_size * config.max_seq_length
    progress.update(progress_text(
        position.step, position.total_steps, sum(r.loss for r in recent) / len(recent),
        ratio(sum(r.mlm_right for r in recent), sum(r.mlm_total for r in recent)), nsp_accuracy(recent),
        recent[-1].lr, tokens / seconds, eta))


def train_record(run, window):
    """One "train" log record: the averages over the steps since the last record."""
    count, position = len(window), run.position
    tokens = run.config.batch_size * run.config.max_seq_length * count
    return dict(step=position.step, epoch=position.epoch, loss=sum(r.loss for r in window) / count,
                mlm_loss=sum(r.mlm_loss for r in window) / count, nsp_loss=nsp_loss_of(window),
                mlm_accuracy=ratio(sum(r.mlm_right for r in window), sum(r.mlm_total for r in window)),
                nsp_accuracy=nsp_accuracy(window), lr=window[-1].lr, grad_norm=window[-1].grad_norm,
                seq_length=window[-1].seq_length, tokens_per_second=tokens / sum(r.seconds for r in window),
                elapsed=position.elapsed_seconds, losses=[r.loss for r in window],
                total_steps=position.total_steps)  # the plan as it stands: the clock may have moved it


def nsp_loss_of(results):
    """The mean sentence-pair loss of the steps that trained it (None if none did)."""
    trained = [r.nsp_loss for r in results if r.nsp_loss is not None]
    return sum(trained) / len(trained) if trained else None


def nsp_accuracy(results):
    """The sentence-pair accuracy over the steps that trained that loss (None if none did)."""
    trained = [r for r in results if r.nsp_loss is not None]
    return ratio(sum(r.nsp_right for r in trained), sum(r.nsp_total for r in trained)) if trained else None


def diverged(run, error, progress):
    """The error for a step whose loss or gradient is not finite: where to go back to, and what to change."""
    step = run.position.step + 1
    progress.close()
    run.log.write("diverged", step=step, reason=str(error))
    where = (f"the last good checkpoint is {run.checkpoint_path} (step {run.last_checkpoint_step})"
             if run.last_checkpoint_step is not None else "no checkpoint was written yet")
    return TrainingDiverged(f"step {step}: {error}, so training stopped before changing the weights; {where}. "
                            f"The learning rate may be too high for this model: start a new run with a lower one "
                            f"(e.g. --lr {run.config.lr / 2:g}).")
