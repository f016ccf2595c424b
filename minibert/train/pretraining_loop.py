"""The pretraining loop, in one function that reads top to bottom (nanoGPT's train.py is the model):
get a batch -> forward -> loss -> backward -> clip -> optimizer step -> schedule step -> log -> evaluate ->
checkpoint, over and over.

What is not the loop is in small named helpers it calls: the run's folder, data, model and checkpoint
(run.py `open_run`), the clock budget (step_plan.py `RunClock`), Ctrl-C (interrupt.py `StopRequest`), and
the speed layer (minibert/fast), asked for in one visible line. An interrupted run resumes exactly.
"""

import collections
import contextlib
import time

from minibert import fast
from minibert.model import pretraining_loss
from minibert.optim import clip_grad_norm
from minibert.train.evaluate import run_model
from minibert.train.interrupt import StopRequest
from minibert.train.metrics import ratio
from minibert.train.progress import ProgressLine, format_duration, progress_text
from minibert.train.run import open_run
from minibert.train.step_plan import RunClock
from minibert.train.update import TrainingDiverged, refuse_if_not_finite, step_result


def pretrain(config, out_dir, resume=False, overrides=None, data_dir=None, stop_after_steps=None,
             show_examples=True, progress=None, log=print, overwrite=False, started=None):
    """Pretrain BERT as `config` (a RunConfig) says, in the run folder `out_dir`; returns a `RunResult`.

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
            clock = RunClock(run, started)
            run.start_schedule(position.total_steps or clock.first_plan(log))  # or the checkpoint's
            scheduler, parameters = run.scheduler, model.parameters()
            kind = "resume" if position.step else "start"
            run.log.write(kind, step=position.step, total_steps=position.total_steps, config=config.to_dict(),
                          model=model.config.to_dict(), parameters=model.num_parameters())
            log(f"{kind} {run.out_dir}: {model!r}, step {position.step} of {position.total_steps}")
            batches, recent, window = run.batches(), collections.deque(maxlen=max(config.log_every, 20)), []
            stopped = "finished"
            clock.start()
            while position.step < position.total_steps:
                if stop.requested:
                    stopped = "interrupted"
                elif clock.out_of_time():
                    stopped = "time limit"
                elif stop_after_steps is not None and position.step >= stop_after_steps:
                    stopped = "paused"
                if stopped != "finished":
                    break
                # 1. a batch: Google's features, its masked positions chosen (minibert/data)
                epoch, index, batch = next(batches)
                step_config, step_started, lr = run.step_config(), time.perf_counter(), optimizer.param_groups[0]["lr"]
                # 2. forward: the MLM head on the masked positions only; 3. loss: MLM + NSP (paper §3.1)
                output = run_model(model, batch)
                loss, mlm_loss, nsp_loss = pretraining_loss(output, batch["masked_lm_ids"],
                                                            batch["masked_lm_weights"],
                                                            batch["next_sentence_labels"], use_nsp=step_config.use_nsp)
                try:  # refused before any weight changes when the loss or the gradient is not finite
                    value = refuse_if_not_finite(loss.item(), "loss", model)
                    loss.backward()  # 4. backward: every parameter's .grad
                    grad_norm = clip_grad_norm(parameters, config.max_grad_norm)  # 5. clip to global norm 1.0
                    refuse_if_not_finite(grad_norm, "gradient norm", model, optimizer)
                except TrainingDiverged as error:
                    raise diverged(run, error, progress) from None
                optimizer.step()  # 6. the update (AdamW, BERT's weight-decay groups)
                scheduler.step()  # 7. the next step's learning rate: warmup, then decay
                optimizer.zero_grad()
                result = step_result(output, batch, value, mlm_loss, nsp_loss, grad_norm, lr)
                result.seconds = time.perf_counter() - step_started
                position.step += 1
                position.epoch, position.batches_into_epoch = epoch, index + 1
                if position.step == run.short_steps:  # the short sequences are done: the long ones start
                    position.epoch, position.batches_into_epoch = 0, 0
                    batches = run.batches()
                    progress.message(f"step {position.step}: from {config.short_seq_length}-token to "
                                     f"{config.max_seq_length}-token sequences")
                clock.after_step(progress)  # the run's time; a run planned from the clock may plan again
                recent.append(result)
                window.append(result)
                show_progress(progress, run, clock, recent)
                # 8. log, evaluate on held-out documents, checkpoint
                if position.step % config.log_every == 0 or position.step == position.total_steps:
                    run.log.write("train", **train_record(run, window))
                    window = []
                if run.eval_batches is not None and (position.step % config.eval_every == 0
                                                     or clock.evaluation_due()):
                    evaluate(run, clock, progress)
                if position.step % config.checkpoint_every == 0:
                    run.save()
            if window:
                run.log.write("train", **train_record(run, window))
            if run.last_checkpoint_step != position.step:  # the last step is saved and evaluated, however it ended
                run.save()
            if run.eval_batches is not None and run.last_evaluation_step != position.step:
                evaluate(run, clock, progress)
        progress.close()
        return run.finish(stopped, show_examples, log)
    finally:
        run.lock.release()


def evaluate(run, clock, progress):
    """Held-out MLM and NSP accuracy now (minibert/train/evaluate.py), logged and shown."""
    started = time.perf_counter()
    evaluation = run.evaluate()
    clock.evaluated(time.perf_counter() - started)
    when = format_duration(run.position.elapsed_seconds)
    progress.message(f"step {run.position.step} ({when}): {evaluation.summary()}")


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
