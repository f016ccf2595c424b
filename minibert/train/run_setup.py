"""Everything a pretraining run builds before its first step, and the checks that keep a run consistent.

- `prepare_data`: the shards (built by `build_pretraining_data` when missing) and the vocabulary.
- `build_model`, `build_optimizer`, `build_scheduler`: the objects of one run, from its `RunConfig`.
- `plan_steps`: how many steps fit in `minutes` on this machine, from the measured speed of a few passes.
- `config_for_resume`: the saved run's settings, refusing changes that would not continue the same run.
- `train_fast`: what the training commands switch on first (the fused ops), and the line that says so.

Every check here runs before training starts, so a mistake costs seconds, not a lost run.
"""

import hashlib
import time
from functools import partial
from pathlib import Path

from minibert.data import PretrainingBatches, build_pretraining_data
from minibert.data.shards import read_manifest
from minibert.errors import CheckpointError, DataError, MinibertError
from minibert.model import BertConfig, BertForPreTraining, pretraining_loss
from minibert.model.memory import check_step_memory
from minibert.nn import use_fused_ops
from minibert.optim import LRScheduler, bert_param_groups, constant, linear_warmup_linear_decay
from minibert.optim.adam import BERT_DEFAULTS
from minibert.optim.bert_recipe import RULES
from minibert.runtime import PLAN_VARIABLE, plan_is_on
from minibert.train.evaluate import run_model
from minibert.train.presets import RunConfig

# Settings that change no number of the run, only what it prints, saves and when it stops: a resumed run
# may change them. Every other setting must stay as the checkpoint recorded it.
SESSION_SETTINGS = ("minutes", "log_every", "eval_every", "eval_batches", "eval_every_minutes",
                    "checkpoint_every")


def train_fast():
    """Switch the fused ops on for the rest of the process, as `pretrain` and `finetune` train; returns the
    line that says so, and whether minibert's thread and memory plan runs (minibert/runtime/threads.py)."""
    use_fused_ops()
    plan = "on" if plan_is_on() else f"off ({PLAN_VARIABLE})"
    return (f"fused ops: on (the same numbers as the plain ops, in fewer passes over memory; "
            f"minibert/nn/fusion.py); threads and memory plan: {plan}")


def prepare_data(config, data_dir=None, log=print):
    """Build or find the run's shards; returns (shard_dir, vocab_path, fingerprint of the data)."""
    shard_dir = Path(build_pretraining_data(
        config.corpus, data_dir, max_seq_length=config.max_seq_length,
        max_predictions_per_seq=config.max_predictions_per_seq, vocab_size=config.vocab_size, log=log))
    manifest = read_manifest(shard_dir)
    vocab_path = shard_dir.parents[1] / "vocab.txt"
    fingerprint = {"vocab_sha256": hashlib.sha256(vocab_path.read_bytes()).hexdigest(),
                   "corpus_bytes": manifest["sources"]["corpus_bytes"],
                   "rows": {split: entry["rows"] for split, entry in manifest["splits"].items()}}
    return shard_dir, vocab_path, fingerprint


def open_batches(shard_dir, config):
    """(training batches, held-out batches or None). Refuses a batch size the training split cannot fill."""
    train = PretrainingBatches(shard_dir, config.batch_size, "train", seed=config.seed, drop_last=True)
    if len(train) == 0:
        raise DataError(f"the training split of {shard_dir} has {train.rows} sequences, fewer than "
                        f"batch_size={config.batch_size}; use a smaller --batch-size or a larger corpus")
    try:
        held_out = PretrainingBatches(shard_dir, config.batch_size, "eval", seed=config.seed, shuffle=False)
    except DataError:
        held_out = None  # a corpus too small to hold documents out
    return train, held_out


def build_model(config, vocab_size):
    """A fresh `BertForPreTraining` for the run: the preset's sizes, the vocabulary's size, the run's
    dropout and attention, initialised from the run's seed."""
    model_config = BertConfig.preset(config.model, vocab_size=vocab_size, hidden_dropout_prob=config.dropout,
                                     attention_probs_dropout_prob=config.dropout, attention=config.attention)
    # Before the first step: a batch far too large for this machine fails now, with the sizes to lower.
    check_step_memory(model_config, config.batch_size, config.max_seq_length, config.max_predictions_per_seq)
    return BertForPreTraining(model_config, seed=config.seed)


def build_optimizer(model, config):
    """The run's update rule with BERT's weight-decay groups (no decay on LayerNorm and bias)."""
    groups = bert_param_groups(model.named_parameters(), config.weight_decay)
    return RULES[config.optimizer](groups, lr=config.lr, betas=BERT_DEFAULTS["betas"],
                                   eps=BERT_DEFAULTS["eps"], weight_decay=config.weight_decay)


def build_scheduler(optimizer, config, total_steps):
    """Linear warmup over `warmup` of the steps, then linear decay to 0 (BERT); or a constant rate."""
    if config.schedule == "constant":
        return LRScheduler(optimizer, constant)
    warmup_steps = int(round(config.warmup * total_steps))
    return LRScheduler(optimizer, partial(linear_warmup_linear_decay, total_steps=total_steps,
                                          warmup_steps=warmup_steps))


def measure_pass_seconds(model, batch, use_nsp, passes=3):
    """Seconds for one forward and backward pass, the fastest after the first (which compiles kernels).

    The passes draw dropout masks, so the random state is put back: measuring must not change the run.
    """
    rng_state = model.rng.bit_generator.state
    times = []
    for _ in range(passes):
        started = time.perf_counter()
        loss, _, _ = pretraining_loss(run_model(model, batch), batch["masked_lm_ids"],
                                      batch["masked_lm_weights"], batch["next_sentence_labels"],
                                      use_nsp=use_nsp)
        loss.backward()
        times.append(time.perf_counter() - started)
    model.zero_grad()
    model.rng.bit_generator.state = rng_state
    return min(times[1:])


def plan_steps(pass_seconds, config, seconds_left):
    """How many steps fit in `seconds_left`: a step is a pass plus ~15% (optimizer, data), and each
    evaluation reads `eval_batches` batches at about a third of a pass each."""
    step_seconds = pass_seconds * 1.15
    eval_seconds_per_step = (config.eval_batches or 20) * pass_seconds / 3 / config.eval_every
    return max(1, int(seconds_left * 0.95 / (step_seconds + eval_seconds_per_step)))


def config_for_resume(saved, overrides):
    """The saved run's `RunConfig` with `overrides` applied, refusing any that would change the numbers.

    saved: the checkpoint's run_config dict; overrides: {field: value} given for this session.
    """
    for name, value in overrides.items():
        if name not in SESSION_SETTINGS and saved.get(name) != value:
            raise CheckpointError(
                f"the checkpoint was made with {name}={saved.get(name)!r}, not {value!r}: a resumed run must "
                f"keep the settings that decide its numbers. Drop that option to continue the run, or start "
                f"a new run in another folder (--out)")
    try:
        return RunConfig.from_dict({**saved, **overrides})
    except (TypeError, ValueError) as error:
        if isinstance(error, MinibertError):
            raise
        # A damaged or hostile checkpoint: a setting of the wrong kind (a list where a name belongs).
        raise CheckpointError(f"the checkpoint's run settings are malformed ({error}); use another "
                              "checkpoint or start a new run") from None


def check_same_run(checkpoint, model, fingerprint, path):
    """Refuse a checkpoint whose model or data differ from the ones this run has built."""
    if checkpoint.model_config != model.config.to_dict():
        theirs = BertConfig.from_dict(checkpoint.model_config).summary()
        raise CheckpointError(f"{path} holds a model of another config ({theirs}) than this run builds "
                              f"({model.config.summary()}); start a new run in another folder (--out)")
    if checkpoint.data != fingerprint:
        raise CheckpointError(f"the pretraining data changed since {path} was written (it trained on "
                              f"{checkpoint.data}, the data is now {fingerprint}); resuming would not "
                              "continue the same run. Start a new run in another folder (--out)")
