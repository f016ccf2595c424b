"""Run presets: everything that decides a pretraining run's numbers, in one dataclass with named defaults.

A `RunConfig` names the model (a `BertConfig` preset), the data (corpus, sequence length, predictions per
sequence), the optimizer and its schedule, the length of the run and the seed. Two runs with the same
`RunConfig` and the same data give the same losses, bit for bit, which is also what lets `--resume` check
that a checkpoint belongs to the run it continues.

    tiny  2 layers, H 64, on the `synthetic` corpus at 64 tokens: learns visibly in about a minute; for
          lessons and CI smoke tests
    mini  4 layers, H 256 (BERT-Mini, Turc et al. 2019), on `pydocs` at 128 tokens, batch 32, 20 predictions
          per sequence, the first 60% of the steps on 32-token sequences (batch 128, 5 predictions): the
          laptop model; the default run takes about 15 minutes on 2 cores

Change any field with `run_preset("mini", lr=1e-3)` or, on the command line, `--lr 1e-3`.

Why these defaults differ from the BERT paper's (lr 1e-4, 10,000 warmup steps, dropout 0.1, 1M steps):
a laptop run is a few thousand steps, not a million. With so few steps the model underfits, so
- the learning rate is higher (AdamW 1e-3 for mini; the PyTorch floor in the issue used 5e-4 and plateaued
  at 15.6% MLM accuracy; 2e-3 collapsed to predicting one token) and warmup is 10% of the run;
- dropout is off for mini: it regularises against overfitting, which a 15-minute run never reaches
  (Geiping & Goldstein 2022, "Cramming", §4.3, drop it for short budgets too);
- AdamW's bias correction is on (BERT's own Adam leaves it out, which only warmup makes harmless);
- the run starts on short sequences (`short_seq_length` below), as BERT did for speed (§A.2), because at
  seq 128 mini sat at the unigram plateau (it predicts "the", "a", "." everywhere). Measured on pydocs,
  two 12-minute runs sharing the 2 cores (one BLAS thread each), held-out MLM accuracy at 128 tokens:
  14.7% after 9 minutes at seq 128 alone (that one with both cores), 18.8% with the first 60% of the steps
  at seq 32, 17.9% with the first 85%; at seq 32 throughout the model reached 30.4% on 32-token text in 9
  minutes, at seq 64 16.6% on 64-token text. 2e-3 collapsed to one token here too. With the schedule, the
  30-minute run alone on the 2 cores (bench/learning_curve.py) reached held-out MLM accuracy 18.6%, 31.7%
  and 42.6% (NSP 62.3%, 71.3%, 73.0%) at 10, 20 and 30 minutes.
"""

import dataclasses
import math
from dataclasses import dataclass

from minibert.errors import ConfigError
from minibert.model.config import PRESETS as MODEL_PRESETS
from minibert.optim.bert_recipe import RULES

SCHEDULES = ("linear", "constant")  # linear warmup then linear decay to 0 (BERT); or a constant rate


@dataclass(frozen=True)
class RunConfig:
    # --- the model ---
    model: str = "mini"  # a BertConfig preset: "tiny", "mini", "base"
    dropout: float = 0.0  # hidden and attention dropout (BERT: 0.1)
    attention: str = "bidirectional"  # "causal" trains the same model with GPT's mask (bench/probe.py)
    # --- the data (built by `build_pretraining_data` when missing) ---
    corpus: str = "pydocs"  # "pydocs", "synthetic", or the path of a corpus file
    vocab_size: int = 8192  # of a newly trained vocabulary; the model takes the vocab file's real size
    max_seq_length: int = 128  # S, tokens per sequence
    max_predictions_per_seq: int = 20  # P, masked positions per sequence at most
    use_nsp: bool = True  # add next-sentence prediction to the loss (RoBERTa drops it)
    # Sequence-length schedule: the first `short_share` of the steps train on sequences of
    # `short_seq_length` tokens, with as many more per batch so a step holds the same tokens; the rest
    # on `max_seq_length`. BERT did this to save compute (§A.2: 90% of the steps at 128, then 512). Here it
    # is for speed of learning: at first every token attends almost evenly to all S positions, so the
    # signal that teaches a head to look at its neighbours is diluted by S, and a short S finds it sooner.
    # Held-out evaluations always read `max_seq_length` sequences.
    short_seq_length: int | None = None  # None: one length throughout
    short_share: float = 0.0  # share of the steps on the short sequences
    # --- optimization ---
    batch_size: int = 32  # B, sequences per step
    optimizer: str = "adamw"  # "adamw", "adam" or "bert_adam" (Google's, no bias correction)
    lr: float = 1e-3  # peak learning rate
    weight_decay: float = 0.01  # BERT's, not applied to LayerNorm and bias parameters
    warmup: float = 0.1  # share of the steps spent warming the learning rate up from 0
    schedule: str = "linear"  # see SCHEDULES
    max_grad_norm: float = 1.0  # global-norm clipping (BERT: 1.0)
    # --- length of the run ---
    steps: int | None = None  # optimizer steps; None: as many as fit in `minutes` on this machine
    minutes: float | None = 15.0  # wall-clock limit of the run (None: no limit, `steps` decides)
    # --- bookkeeping ---
    seed: int = 0  # initial weights, dropout, batch order and dynamic masks
    # cores the matmuls and the Numba kernels share (None: every core); how, see `training_threads` in
    # minibert/runtime/threads.py
    threads: int | None = None
    log_every: int = 10  # steps between JSONL log records
    eval_every: int = 200  # steps between held-out evaluations (and one at the end)
    eval_batches: int = 20  # held-out batches per evaluation (None: the whole eval split)
    eval_every_minutes: float | None = None  # also evaluate each time the run's time passes a multiple
    checkpoint_every: int = 200  # steps between checkpoints (and one at the end, and on Ctrl-C)

    def __post_init__(self):
        if self.model not in MODEL_PRESETS:
            raise ConfigError(f"model={self.model!r} is not a model preset; choose one of "
                              f"{', '.join(MODEL_PRESETS)}")
        for name in ("vocab_size", "max_seq_length", "max_predictions_per_seq", "batch_size", "log_every",
                     "eval_every", "checkpoint_every"):
            _check_whole(name, getattr(self, name), minimum=1)
        _check_whole("seed", self.seed, minimum=0)
        if self.threads is not None:
            _check_whole("threads", self.threads, minimum=1)
        if self.steps is not None:
            _check_whole("steps", self.steps, minimum=1)
        if self.eval_batches is not None:
            _check_whole("eval_batches", self.eval_batches, minimum=1)
        if self.steps is None and self.minutes is None:
            raise ConfigError("a run needs an end: give steps (e.g. 1000) or minutes (e.g. 15)")
        for name in ("minutes", "eval_every_minutes"):
            value = getattr(self, name)
            if value is not None and not (_is_number(value) and value > 0):
                raise ConfigError(f"{name}={value!r} must be a number > 0")
        if self.max_seq_length < 8:
            raise ConfigError(f"max_seq_length={self.max_seq_length} is too short for [CLS] A [SEP] B [SEP]; "
                              "use at least 8 (BERT: 128, then 512)")
        if self.max_predictions_per_seq > self.max_seq_length - 3:
            raise ConfigError(f"max_predictions_per_seq={self.max_predictions_per_seq} does not fit in "
                              f"max_seq_length={self.max_seq_length} (3 positions are [CLS] and [SEP]); "
                              f"use about 15% of it, e.g. {max(1, round(0.15 * self.max_seq_length))}")
        max_positions = MODEL_PRESETS[self.model]["max_position_embeddings"]
        if self.max_seq_length > max_positions:
            raise ConfigError(f"max_seq_length={self.max_seq_length} exceeds the {self.model!r} model's "
                              f"max_position_embeddings={max_positions}; use a shorter sequence or a larger "
                              "model preset")
        if self.short_seq_length is not None:
            _check_whole("short_seq_length", self.short_seq_length, minimum=8)
            if self.max_seq_length % self.short_seq_length or self.short_seq_length == self.max_seq_length:
                raise ConfigError(f"short_seq_length={self.short_seq_length} must divide max_seq_length="
                                  f"{self.max_seq_length} and be shorter (e.g. {self.max_seq_length // 2}), so a "
                                  "short batch holds the same tokens as a long one")
        if not (_is_number(self.short_share) and 0 <= self.short_share < 1):
            raise ConfigError(f"short_share={self.short_share!r} is the share of steps on short sequences: a "
                              "number in [0, 1), e.g. 0.7")
        if self.optimizer not in RULES:
            raise ConfigError(f"optimizer={self.optimizer!r}; choose one of {', '.join(RULES)}")
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"schedule={self.schedule!r}; choose one of {', '.join(SCHEDULES)}")
        if self.attention not in ("bidirectional", "causal"):
            raise ConfigError(f"attention={self.attention!r}; choose 'bidirectional' (BERT) or "
                              "'causal' (GPT)")
        if not (_is_number(self.lr) and 0 < self.lr < 1):
            raise ConfigError(f"lr={self.lr!r} must be a number in (0, 1), e.g. 1e-3")
        if not (_is_number(self.weight_decay) and self.weight_decay >= 0):
            raise ConfigError(f"weight_decay={self.weight_decay!r} must be a number >= 0 (BERT: 0.01)")
        if not (_is_number(self.warmup) and 0 <= self.warmup < 1):
            raise ConfigError(f"warmup={self.warmup!r} is the share of steps spent warming up: a number in "
                              "[0, 1), e.g. 0.1")
        if not (_is_number(self.dropout) and 0 <= self.dropout < 1):
            raise ConfigError(f"dropout={self.dropout!r} must be a number in [0, 1) (BERT: 0.1)")
        if not (_is_number(self.max_grad_norm) and self.max_grad_norm > 0):
            raise ConfigError(f"max_grad_norm={self.max_grad_norm!r} must be a number > 0 (BERT: 1.0)")

    def short_phase(self):
        """The settings of the short-sequence steps (None without a schedule): the same tokens per batch in
        shorter sequences, with masked positions per sequence scaled alike."""
        if self.short_seq_length is None or self.short_share == 0:
            return None
        times = self.max_seq_length // self.short_seq_length
        return self.replace(max_seq_length=self.short_seq_length, batch_size=self.batch_size * times,
                            max_predictions_per_seq=max(1, self.max_predictions_per_seq // times),
                            short_seq_length=None, short_share=0.0)

    def replace(self, **changes):
        """A copy with some fields changed (and checked again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values):
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown run settings {unknown}; known ones are {sorted(known)}")
        return cls(**values)


def _check_whole(name, value, minimum):
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{name}={value!r} must be a whole number >= {minimum}")


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


RUN_PRESETS = {
    "tiny": RunConfig(model="tiny", corpus="synthetic", vocab_size=1024, max_seq_length=64,
                      max_predictions_per_seq=10, batch_size=32, lr=3e-3, steps=800, minutes=None,
                      log_every=10, eval_every=200, eval_batches=10, checkpoint_every=200),
    "mini": RunConfig(short_seq_length=32, short_share=0.6),
}


def run_preset(name, **overrides):
    """The named run preset with some fields overridden: `run_preset("tiny", steps=50, seed=1)`."""
    if name not in RUN_PRESETS:
        raise ConfigError(f"unknown run preset {name!r}; choose one of {', '.join(RUN_PRESETS)}")
    return RUN_PRESETS[name].replace(**overrides)
