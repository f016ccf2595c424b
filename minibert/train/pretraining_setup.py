"""Everything a pretraining run builds before its first step, and the checks that keep a run consistent.

- `prepare_data`: the shards (built by `build_pretraining_data` when missing) and the vocabulary.
- `corpus_record`: what the shards' corpus was built from (versions.json), which the run's log keeps.
- `build_model`, `build_scheduler`: the objects of one run, from its `PretrainingConfig` (the optimizer is
  `minibert.optim.bert_optimizer`); `short_steps_for`: where its short sequences end.
- `config_for_resume`: the saved run's settings, refusing changes that would not continue the same run.

Every check here runs before training starts, so a mistake costs seconds, not a lost run.
"""

import json
from functools import partial
from pathlib import Path

import numpy as np

from minibert.data import PretrainingBatches, build_pretraining_data
from minibert.data.corpora import VERSIONS_FILE
from minibert.data.masking import MaskingConfig
from minibert.data.shards import read_manifest
from minibert.errors import CheckpointError, DataError, MinibertError
from minibert.model import BertConfig, BertForPreTraining
from minibert.model.attention_init import mimetic_query_key
from minibert.model.memory import check_step_memory
from minibert.model.position_init import sinusoidal_positions
from minibert.optim import (
    LRScheduler,
    constant,
    linear_warmup_linear_decay,
    warmup_stable_decay,
)
from minibert.tokenizer.vocab import vocab_fingerprint
from minibert.train.pretraining_config import PretrainingConfig

# Settings that change no number of the run, only what it prints, saves, when it stops and how fast it goes: a
# resumed run may change them. Every other setting must stay as the checkpoint recorded it. The thread count
# is speed alone, but not to the bit: the kernels give the same bits on any number of threads, while BLAS
# rounds the last bits of a matmul cut in parts by the number of parts, so a run resumed on another count is
# told that it continues within float32 rounding, not bit for bit (pretraining_run.py).
SESSION_SETTINGS = ("minutes", "log_every", "eval_every", "eval_batches", "eval_every_minutes",
                    "checkpoint_every", "threads")


def prepare_data(config, data_dir=None, log=print):
    """Build or find the run's shards; returns (shard_dir, vocab_path, fingerprint of the data)."""
    shard_dir = Path(build_pretraining_data(
        config.corpus, data_dir, max_seq_length=config.max_seq_length,
        max_predictions_per_seq=config.max_predictions_per_seq, vocab_size=config.vocab_size,
        sentence_task=config.sentence_task, dupe_factor=config.dupe_factor, log=log))
    manifest = read_manifest(shard_dir)
    vocab_path = shard_dir.parents[1] / "vocab.txt"
    fingerprint = {"vocab_sha256": vocab_fingerprint(vocab_path),
                   "corpus_bytes": manifest["sources"]["corpus_bytes"],
                   "rows": {split: entry["rows"] for split, entry in manifest["splits"].items()}}
    return shard_dir, vocab_path, fingerprint


def corpus_record(shard_dir):
    """What the corpus of `shard_dir` was built from, as its `versions.json` says (its sha256, and for pydocs
    the Python and the packages whose docstrings it holds), or None for a corpus without one. pydocs is built
    from the installed packages, so a checkpoint can be made again only from a corpus of the same versions:
    the run's log keeps them."""
    path = Path(read_manifest(shard_dir)["sources"]["corpus"]).parent / VERSIONS_FILE
    try:
        versions = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    kept = ("corpus", "sha256", "bytes", "python", "packages")
    return {key: versions[key] for key in kept if key in versions} if isinstance(versions, dict) else None


def open_batches(shard_dir, config):
    """(training batches, held-out batches or None). Refuses a batch size the training split cannot fill."""
    # The training rows are masked at the run's rate; the held-out rows at BERT's 15%, as the shards were built,
    # so that runs with different rates are measured on the same task.
    masking = MaskingConfig(config.masked_lm_prob, config.max_predictions_per_seq, config.mask_token_prob,
                            config.random_token_prob)
    train = PretrainingBatches(shard_dir, config.batch_size, "train", seed=config.seed, drop_last=True,
                               masking=masking)
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
    model = BertForPreTraining(model_config, seed=config.seed)
    if config.position_init == "sinusoidal":
        positions = model.bert.embeddings.position_embeddings.weight
        positions.data[...] = sinusoidal_positions(*positions.shape, model_config.initializer_range)
    if config.attention_init == "mimetic":
        rng = np.random.default_rng([config.seed, 7])  # a stream of its own: the other weights stay as they were
        for layer in model.bert.encoder.layer:
            attention = layer.attention.self
            attention.query.weight.data[...], attention.key.weight.data[...] = mimetic_query_key(
                model_config.hidden_size, model_config.num_attention_heads, rng)
    return model


def build_scheduler(optimizer, config, total_steps):
    """The run's learning-rate schedule (`schedule_for`) applied to the optimizer's groups."""
    return LRScheduler(optimizer, schedule_for(config, total_steps))


def schedule_for(config, total_steps):
    """Linear warmup over `warmup` of the steps, then linear decay to 0 (BERT), or the peak held until the
    last `decay` of the steps ("stable-decay"); or a constant rate."""
    if config.schedule == "constant":
        return constant
    warmup_steps = int(round(config.warmup * total_steps))
    if config.schedule == "stable-decay":
        return partial(warmup_stable_decay, total_steps=total_steps, warmup_steps=warmup_steps,
                       decay_steps=total_steps - cooldown_start(config, total_steps))
    return partial(linear_warmup_linear_decay, total_steps=total_steps, warmup_steps=warmup_steps)


def short_steps_for(config, total_steps):
    """How many of `total_steps` go to the short sequences: the first `short_share` of them (0 without)."""
    return round(config.short_share * total_steps) if config.short_phase() is not None else 0


def cooldown_start(config, total_steps):
    """The first step of a stable-decay schedule's cool-down: the last `decay` of the steps, after warmup."""
    warmup_steps = int(round(config.warmup * total_steps))
    return total_steps - min(total_steps - warmup_steps, int(round(config.decay * total_steps)))


def config_for_resume(saved, overrides):
    """The saved run's `PretrainingConfig` with `overrides` applied, refusing any that would change the numbers.

    saved: the checkpoint's run_config dict; overrides: {field: value} given for this session.
    """
    # a setting newer than the checkpoint was saved with its default, which the run therefore used
    saved = {**PretrainingConfig().to_dict(), **saved}
    for name, value in overrides.items():
        if name not in SESSION_SETTINGS and saved.get(name) != value:
            raise CheckpointError(
                f"the checkpoint was made with {name}={saved.get(name)!r}, not {value!r}: a resumed run must "
                f"keep the settings that decide its numbers. Drop that option to continue the run, or start "
                f"a new run in another folder (--out)")
    try:
        return PretrainingConfig.from_dict({**saved, **overrides})
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
