"""The fine-tuning loop: every weight of BERT and its new head trained on a labelled task for a few epochs.

The recipe is the paper's (§4 and appendix A.3), Google's run_classifier.py / run_squad.py: AdamW with
BERT's settings, batch 32, 3 epochs, 10% linear warmup then linear decay to 0, gradients clipped to global
norm 1.0, and the best epoch on the dev set kept. A task object (`classification.py`,
`question_answering.py`, `tagging.py`) supplies what differs between tasks: how examples become features
and batches, the loss, and the dev metrics.
"""

# The recipe in detail:
# - AdamW with BERT's settings (β 0.9/0.999, eps 1e-6, weight decay 0.01 except LayerNorm and biases);
# - learning rate: the paper picks from 5e-5, 3e-5, 2e-5 for BERT-base. Small models on small sets want
#   more (`default_learning_rate`): for `tiny` (H 64) on the synthetic tasks 1e-3 was measured best (NER
#   entity F1 after 3 epochs: 0.01 at 1e-4, 0.79 at 1e-3; sentiment leaves chance only at >= 3e-4);
#   for models up to H 512 (`mini`: 256) 3e-4, the top of the range Turc et al. (2019, "Well-Read
#   Students Learn Better") searched for BERT-Mini and -Small;
# - batch 32, 3 epochs (more for a small set: `plateau.default_epochs`), linear warmup over the first 10%
#   of the steps, then linear decay to 0;
# - gradients clipped to global norm 1.0;
# - the dev set is evaluated after every epoch, and the best epoch's model is the one kept (saved to
#   `out_dir` if given), as one picks the best of several runs in the paper.
# - the head starts from N(0, 0.02), as BERT's; `head_init="probe"` starts a classifier from the linear
#   probe of the frozen encoder instead (probe_start.py, LP-FT), which docs/finetuning_recipe.md measures.

import contextlib
import math
import time
from dataclasses import asdict, dataclass, field
from functools import partial

import numpy as np

from minibert.errors import ConfigError
from minibert.fast import accelerate, process_plan
from minibert.finetune.batching import batch_order
from minibert.finetune.plateau import MIN_STEPS, default_epochs, plateau_warning
from minibert.finetune.probe_start import start_head_from_probe
from minibert.finetune.report import write_ending, write_finetune_report
from minibert.finetune.saved_model import save_finetuned, write_record
from minibert.inspect.model_folder import read_weights
from minibert.nn.layers import Dropout
from minibert.optim import LRScheduler, bert_optimizer, linear_warmup_linear_decay
from minibert.train.interrupt import StopRequest, how_it_stopped
from minibert.train.logs import LOG_FILE, TrainingLog, read_log
from minibert.train.progress import ProgressLine, format_duration
from minibert.train.update import TrainingDiverged, checked_update


@dataclass
class FineTuneConfig:
    learning_rate: float | None = None  # None: default_learning_rate(model config)
    batch_size: int = 32  # the paper: 16 or 32
    epochs: int | None = None  # None: the paper's 3, or more for a small set (plateau.default_epochs)
    warmup_proportion: float = 0.1  # share of the steps with a rising learning rate
    max_grad_norm: float = 1.0
    seed: int = 0  # order of the training examples (the model's own seed draws the head and dropout)
    eval_batch_size: int = 64
    threads: int | None = None  # cores for matmuls and kernels (None: all), as in pretraining (fast/process.py)
    plain: bool = False  # True: the core's plain layers alone, without the speed layer (minibert/fast)
    # The recipe for small pretrained models (docs/finetuning_recipe.md measures each):
    layer_decay: float = 1.0  # lr of encoder layer l is lr·decay^(L+1-l) (optim/layer_decay.py); 1: BERT's
    head_lr: float | None = None  # lr of the pooler and the head (None: the same as the encoder's top)
    reinit_pooler: bool = False  # draw the pooler afresh: it was trained for NSP, not for this task
    # classification: "cls" (the pooler, BERT's) or "mean" of the real tokens (heads.py); None: the model
    # folder's (finetuning_run.py: "mean" for a sentence-transformers folder that pools so, else "cls")
    pooling: str | None = None
    head_init: str = "random"  # classification: "random" (BERT's N(0, 0.02)) or "probe" (probe_start.py)
    # every dropout of the model (hidden and attention); None: the model config's (mini: 0.0, BERT's: 0.1).
    # An experiment comparing models sets it, so that the models share one recipe.
    dropout: float | None = None
    # evaluate on dev at most this many times, every few epochs and after the last (None: after every epoch):
    # a run of many short epochs (a tiny set given enough steps) would spend most of its time evaluating
    evaluations: int | None = None

    def __post_init__(self):
        for name in ("batch_size", "epochs", "eval_batch_size", "evaluations"):
            if name in ("epochs", "evaluations") and getattr(self, name) is None:
                continue
            if type(getattr(self, name)) is not int or getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)!r} must be a whole number >= 1")
        if not 0 <= self.warmup_proportion <= 1:
            raise ConfigError(f"warmup_proportion={self.warmup_proportion} must be between 0 and 1 "
                              "(BERT: 0.1)")
        if self.threads is not None and (type(self.threads) is not int or self.threads < 1):
            raise ConfigError(f"threads={self.threads!r} must be a whole number >= 1 (or None: every core)")
        if self.learning_rate is not None and not self.learning_rate > 0:
            raise ConfigError(f"learning_rate={self.learning_rate} must be > 0 (BERT: 2e-5 to 5e-5)")
        if not 0 < self.layer_decay <= 1:
            raise ConfigError(f"layer_decay={self.layer_decay} must be in (0, 1]: 1 gives every layer the same "
                              "rate, 0.8 gives each layer 0.8 of the rate of the one above")
        if self.pooling not in (None, "cls", "mean"):
            raise ConfigError(f"pooling={self.pooling!r}: choose 'cls' (BERT's pooler) or 'mean'")
        if self.head_init not in ("random", "probe"):
            raise ConfigError(f"head_init={self.head_init!r}: choose 'random' (BERT's) or 'probe' (the linear "
                              "probe of the frozen encoder, then fine-tuning)")
        if self.dropout is not None and not 0 <= self.dropout < 1:
            raise ConfigError(f"dropout={self.dropout!r} must be in [0, 1), or None for the model config's")
        if self.head_lr is not None and not self.head_lr > 0:
            raise ConfigError(f"head_lr={self.head_lr} must be > 0, or None for the encoder's rate")


def default_learning_rate(config):
    """5e-5 (the paper's) from BERT-base's width up; 3e-4 below it; 1e-3 up to H 128 (see the comment
    at the top of this module for the measurements)."""
    if config.hidden_size >= 768:
        return 5e-5
    return 1e-3 if config.hidden_size <= 128 else 3e-4


@dataclass
class FineTuneResult:
    best_metrics: dict  # the dev metrics of the best epoch
    best_epoch: int  # from 1
    history: list = field(default_factory=list)  # per epoch: {"epoch", "train_loss", "dev", "seconds"}
    seconds: float = 0.0  # wall time of training and evaluation
    warning: str | None = None  # set when the run learned nothing (plateau.plateau_warning)


def build_model(task, model_dir, random_init=False, seed=0, verbose=True):
    """The task's head on the encoder of `model_dir`, or, with random_init, on a fresh encoder of the same
    config and vocabulary (to measure what pretraining is worth). Call task.fit_labels first."""
    if not random_init:
        return task.head.from_pretrained(model_dir, **task.head_options(), seed=seed, verbose=verbose)
    config, _, vocab_file = read_weights(model_dir)
    options = task.head_options()
    if options.get("labels") is not None:
        task.head.set_labels(config, options["labels"])  # the head then has one output per label
    model = task.head(config, options.get("num_labels"), seed)
    model.vocab_file = vocab_file
    if verbose:
        print(f"{type(model).__name__} ({model.num_parameters():,} parameters): random initialisation, "
              f"config and vocabulary of {model_dir}")
    return model


def fine_tune(task, model, train_examples, dev_examples, settings=None, out_dir=None, stream=None,
              record=None):
    """Fine-tune `model` on the task; evaluate on dev after each epoch; keep the best epoch's weights.

    The model ends with the best epoch's weights. out_dir: where the best model, `finetune.json` and the
    log go (nothing is written when None). record: extra facts for finetune.json (task name, source).
    """
    settings = settings or FineTuneConfig()
    if settings.head_init == "probe" and (task.kind != "classification" or task.regression):
        raise ConfigError("head_init 'probe' (--head-init probe) starts a classifier from a linear probe; this "
                          f"task is {'a regression' if task.kind == 'classification' else task.kind}: leave it out")
    if settings.reinit_pooler:
        model.reinitialize_pooler()
    if settings.pooling not in (None, "cls"):  # saved in config.json, so that predict pools the same way
        model.config.extra["classifier_pooling"] = settings.pooling
    if settings.dropout is not None:
        set_dropout(model, settings.dropout)
    if settings.plain:
        return _fine_tune(task, model, train_examples, dev_examples, settings, out_dir, stream, record)
    accelerate(model)  # fused layers: the same numbers in fewer passes over memory (minibert/fast)
    with process_plan(settings.threads):
        return _fine_tune(task, model, train_examples, dev_examples, settings, out_dir, stream, record)


def _fine_tune(task, model, train_examples, dev_examples, settings, out_dir, stream, record):
    learning_rate = settings.learning_rate or default_learning_rate(model.config)
    started = time.perf_counter()
    progress = ProgressLine(stream)
    check_fit(task, model, progress)
    train_features = task.encode(train_examples, training=True)
    dev_features = task.encode(dev_examples)
    unknown = unknown_share(task, train_features)
    if unknown > 0.01:
        progress.message(f"warning: {unknown:.1%} of the training tokens are [UNK] in this vocabulary, and "
                         "the model cannot tell those words apart; use a model whose vocabulary was trained "
                         "on text like the task's (e.g. train the vocabulary on the corpus plus the task "
                         "files)")
    if settings.head_init == "probe":
        ridge = start_head_from_probe(task, model, train_features, settings.eval_batch_size)
        progress.message(f"head: the linear probe of the frozen encoder's inputs to it (ridge penalty {ridge:g}, "
                         "chosen on folds of the training set), then every weight is fine-tuned")
    steps_per_epoch = math.ceil(len(train_features) / settings.batch_size)
    epochs = settings.epochs or default_epochs(steps_per_epoch)
    total_steps = epochs * steps_per_epoch
    evaluate_every = math.ceil(epochs / settings.evaluations) if settings.evaluations else 1
    optimizer, scheduler = recipe_optimizer(model, learning_rate, settings, total_steps)
    parameters = model.parameters()
    log = TrainingLog(f"{out_dir}/{LOG_FILE}") if out_dir is not None else None
    if log is not None:
        log.path.unlink(missing_ok=True)  # a new run into the same folder starts a new log
        log.write("start", step=0)
    record = {**(record or {}), "settings": {**asdict(settings), "learning_rate": learning_rate,
                                             "epochs": epochs},
              "train_examples": len(train_examples), "train_features": len(train_features),
              "dev_examples": len(dev_examples)}
    progress.message(f"fine-tuning: {len(train_features)} training features, {total_steps} steps of "
                     f"{settings.batch_size}, lr {learning_rate:g}, {epochs} epochs"
                     + ("" if settings.epochs else f" (at least {MIN_STEPS} steps: `plateau.py`)"))
    shuffle = np.random.default_rng(settings.seed)
    result, best_state, step, first_losses = FineTuneResult({}, 0), None, 0, []
    report = None  # the report's data as last written, rewritten with how the run ended, however it ends
    try:
        with StopRequest(progress.message, "Ctrl-C: stopping after this step; the best epoch so far stays "
                                           "saved (Ctrl-C again to quit now)") as stop:
            for epoch in range(1, epochs + 1):
                epoch_started, losses = time.perf_counter(), []
                model.train()
                for indexes in batch_order(len(train_features), settings.batch_size, shuffle):
                    lr = max(group["lr"] for group in optimizer.param_groups)  # the top's, with layer_decay
                    try:
                        losses.append(finetune_step(task, model, parameters, optimizer, scheduler, settings,
                                                    task.batch([train_features[i] for i in indexes])))
                    except TrainingDiverged as error:
                        progress.close()
                        raise TrainingDiverged(f"step {step + 1} (epoch {epoch}): {error}") from None
                    step += 1
                    if step <= 10:
                        first_losses.append(losses[-1])
                    elapsed = time.perf_counter() - started
                    progress.update(f"epoch {epoch}/{epochs}  step {step}/{total_steps}  loss "
                                    f"{np.mean(losses[-20:]):.4f}  lr {lr:.1e}  {step / elapsed:.1f} steps/s  ETA "
                                    f"{format_duration(elapsed / step * (total_steps - step))}")
                    if log is not None and (step % 10 == 0 or step == total_steps):
                        log.write("train", step=step, epoch=epoch, loss=losses[-1], lr=lr, elapsed=elapsed)
                    if stop.requested:
                        stop_between_steps(progress, task, out_dir, log, record, result, step, total_steps)
                if epoch % evaluate_every and epoch != epochs:
                    continue
                dev = task.evaluate(model, dev_examples, dev_features, settings.eval_batch_size)
                entry = {"epoch": epoch, "train_loss": float(np.mean(losses)), "dev": dev,
                         "seconds": time.perf_counter() - epoch_started}
                result.history.append(entry)
                if log is not None:
                    log.write("eval", step=step, **entry)
                    report = write_finetune_report(out_dir, task, model, dev_examples, dev_features, record,
                                                   result.history, read_log(log.path), epoch)
                improved = not result.best_metrics or dev[task.main_metric] > result.best_metrics[task.main_metric]
                progress.message(f"epoch {epoch}: train loss {entry['train_loss']:.4f}  dev "
                                 + "  ".join(f"{name} {value:.4f}" for name, value in dev.items())
                                 + ("  (best so far)" if improved else ""))
                if improved:
                    result.best_metrics, result.best_epoch = dev, epoch
                    best_state = {name: array.copy() for name, array in model.state_dict().items()}
                    if out_dir is not None:
                        save_finetuned(out_dir, model, task, {**record, "history": result.history,
                                                              "best_epoch": epoch, "best": dev})
    except BaseException as error:
        if log is not None:
            record_the_end(out_dir, log, report, step, error)
        raise
    result.warning = plateau_warning(task, dev_examples, result, learning_rate, first_losses)
    if result.warning:
        progress.message(result.warning)
    progress.close()
    model.load_state_dict(best_state)
    result.seconds = time.perf_counter() - started
    if out_dir is not None:  # the record again, now with every epoch (the saved weights are the best's)
        write_record(out_dir, task, {**record, "history": result.history, "best_epoch": result.best_epoch,
                                     "best": result.best_metrics, "seconds": result.seconds,
                                     "warning": result.warning})
        log.write("end", step=step, stopped="finished")  # the report's last word: the kept epoch's mistakes
        write_finetune_report(out_dir, task, model, dev_examples, dev_features, record, result.history,
                              read_log(log.path), result.best_epoch)
    return result


def set_dropout(model, p):
    """Every dropout of `model` drops with probability `p`, and its config says so (a saved model's too)."""
    model.config.hidden_dropout_prob = model.config.attention_probs_dropout_prob = p
    for _, module in model.named_modules():
        if isinstance(module, Dropout):
            module.p = p


def stop_between_steps(progress, task, out_dir, log, record, result, step, total_steps):
    """Ctrl-C, read between two steps: the best epoch's model saved so far stays as it is, its record says the
    run was stopped and where, and KeyboardInterrupt ends the run (the caller says what else is kept)."""
    if not result.best_epoch:
        kept = "no epoch had ended, so no model was saved"
    else:
        kept = (f"the best epoch so far ({result.best_epoch}: {task.main_metric} "
                f"{result.best_metrics[task.main_metric]:.4f}) is saved" + (f" in {out_dir}" if out_dir else ""))
    if out_dir is not None:
        if result.best_epoch:
            write_record(out_dir, task, {**record, "history": result.history, "best_epoch": result.best_epoch,
                                         "best": result.best_metrics,
                                         "stopped": f"Ctrl-C after step {step} of {total_steps}"})
        kept += "; to train again from the start, run the same command with --overwrite"
    progress.message(f"stopped after step {step} of {total_steps}: {kept}")
    progress.close()
    raise KeyboardInterrupt


def record_the_end(out_dir, log, report, step, error):
    """How a run that did not finish ended, in its log's "end" record and its report (if an epoch wrote one):
    interrupted (Ctrl-C), diverged, or failed (any other error, which the caller raises on)."""
    stopped = how_it_stopped(error, TrainingDiverged)
    # The run's own error is the one to report: a second one here (a full disk) must not replace it.
    with contextlib.suppress(Exception):
        log.write("end", step=step, stopped=stopped)
        if report is not None:
            write_ending(out_dir, report, read_log(log.path))


def recipe_optimizer(model, learning_rate, settings, total_steps):
    """(optimizer, scheduler) of the recipe: AdamW with BERT's settings, each layer's rate by depth (1: one
    rate for all, as BERT), linear warmup then linear decay."""
    optimizer = bert_optimizer(model.named_parameters(), learning_rate, rule="adamw",
                               by_depth={"num_layers": model.config.num_hidden_layers,
                                         "decay": settings.layer_decay, "head_lr": settings.head_lr})
    scheduler = LRScheduler(optimizer, partial(linear_warmup_linear_decay, total_steps=total_steps,
                                               warmup_steps=round(settings.warmup_proportion * total_steps)))
    return optimizer, scheduler


def check_fit(task, model, progress):
    """The tokenizer must be the model's, and sequences must fit its positions (lowered if needed)."""
    if task.tokenizer.vocab_size != model.config.vocab_size:
        raise ConfigError(f"the tokenizer has {task.tokenizer.vocab_size} tokens but the model's vocab_size "
                          f"is {model.config.vocab_size}; use the vocab.txt the model was trained with")
    if task.max_seq_length > model.config.max_position_embeddings:
        progress.message(f"max_seq_length {task.max_seq_length} lowered to the model's "
                         f"max_position_embeddings={model.config.max_position_embeddings}")
        task.max_seq_length = model.config.max_position_embeddings


def unknown_share(task, features):
    """The share of [UNK] among the tokens of the features, [CLS], [SEP] and padding left out."""
    input_ids = np.concatenate([task.batch(features[start:start + 256])["input_ids"].ravel()
                                for start in range(0, len(features), 256)])
    tokenizer = task.tokenizer
    words = ~np.isin(input_ids, (tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id))
    return float(np.mean(input_ids[words] == tokenizer.unk_token_id)) if words.any() else 0.0


def finetune_step(task, model, parameters, optimizer, scheduler, settings, batch):
    """One update: loss, backward, clip, AdamW step, schedule step. Returns the loss. A non-finite loss or
    gradient stops the run (TrainingDiverged) before any weight changes."""
    value, _ = checked_update(task.loss(model, batch), model, parameters, optimizer, scheduler,
                              settings.max_grad_norm, loss_name="fine-tuning loss",
                              advice="; lower the learning rate")
    return value
