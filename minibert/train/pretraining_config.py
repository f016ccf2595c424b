"""Run presets: everything that decides a pretraining run's numbers, in one dataclass with named defaults.

A `PretrainingConfig` names the model, the data, the optimizer and its schedule, the length of the run and the
seed. Two runs with the same `PretrainingConfig` and data give the same losses, bit for bit, which also lets
`--resume` check that a checkpoint belongs to the run it continues. Presets: `tiny` (2 layers, H 64, the
`synthetic` corpus: learns visibly in about a minute, for lessons and CI) and `mini` (BERT-Mini, Turc et
al. 2019, on `pydocs`: the laptop model, 15 minutes by default). Change any field with
`run_preset("mini", lr=1e-3)` or `--lr 1e-3`. The `mini` recipe (beside `RUN_PRESETS` below) changes
BERT's defaults for a run of about a thousand steps; docs/learning.md measures each change, kept or not.
"""

import dataclasses
from dataclasses import dataclass

from minibert.config import PRESETS as MODEL_PRESETS
from minibert.errors import ConfigError
from minibert.optim.adam import BERT_DEFAULTS
from minibert.optim.bert_recipe import RULES
from minibert.validation import check_whole, is_number

# linear warmup then linear decay to 0 (BERT); warmup, the peak held, then a linear cool-down over the last
# `decay` of the steps; or a constant rate
SCHEDULES = ("linear", "stable-decay", "constant")


@dataclass(frozen=True)
class PretrainingConfig:
    # --- the model ---
    model: str = "mini"  # a BertConfig preset: "tiny", "mini", "base"
    dropout: float = 0.0  # hidden and attention dropout (BERT: 0.1)
    attention: str = "bidirectional"  # "causal" trains the same model with GPT's mask (bench/probe.py)
    position_init: str = "normal"  # start of the learned positions: "normal" (BERT) or "sinusoidal"
    attention_init: str = "normal"  # start of the query and key projections: "normal" (BERT) or "mimetic"
    # --- the data (built by `build_pretraining_data` when missing) ---
    corpus: str = "pydocs"  # "pydocs", "pydocs-large", "synthetic", or the path of a corpus file
    vocab_size: int = 8192  # of a newly trained vocabulary; the model takes the vocab file's real size
    max_seq_length: int = 128  # S, tokens per sequence
    max_predictions_per_seq: int = 20  # P, masked positions per sequence at most
    masked_lm_prob: float = 0.15  # share of each training sequence to mask (BERT: 0.15; held-out: always 0.15)
    # of the chosen tokens, the shares shown as [MASK] and as a random token; the rest stay unchanged (BERT:
    # 80/10/10; the paper's Table 8 compares other mixes, `python -m minibert experiment masking`)
    mask_token_prob: float = 0.8
    random_token_prob: float = 0.1
    use_nsp: bool = True  # add the sentence-pair loss (RoBERTa drops it)
    # what that loss asks of a pair: "nsp", is B the sentence after A (BERT); "sop", are A and B in their
    # order or swapped (ALBERT's sentence-order prediction). minibert/data/instances.py builds the pairs.
    sentence_task: str = "nsp"
    # passes over the training documents when the data is built, each cutting them into other sentence
    # pairs (Google's dupe_factor: 10); None: one pass (new masks are drawn every epoch anyway)
    dupe_factor: int | None = None
    # Sequence-length schedule: the first `short_share` of the steps train on sequences of
    # `short_seq_length` tokens, with as many more per batch so a step holds the same tokens; the rest
    # on `max_seq_length`. BERT did this to save compute (§A.2: 90% of the steps at 128, then 512). Here it
    # is for speed of learning: at first every token attends almost evenly to all S positions, so the
    # signal that teaches a head to look at its neighbours is diluted by S, and a short S finds it sooner.
    # Held-out evaluations always read `max_seq_length` sequences.
    short_seq_length: int | None = None  # None: one length throughout
    short_share: float = 0.0  # share of the steps on the short sequences
    # Whether the short steps train the sentence-pair loss too. A pair of 32 tokens says little about whether
    # B follows A, and that loss pulls on the same weights as the masked LM: without it the masked LM learns
    # faster (docs/learning.md, "A third round"), and the pooler and NSP head start learning at the switch.
    short_phase_nsp: bool = True
    # --- optimization ---
    batch_size: int = 32  # B, sequences per step
    optimizer: str = "adamw"  # "adamw", "adam" or "bert_adam" (Google's, no bias correction)
    lr: float = 1e-3  # peak learning rate
    weight_decay: float = 0.01  # BERT's, not applied to LayerNorm and bias parameters
    adam_beta2: float = 0.999  # decay of Adam's second moment (BERT: 0.999; RoBERTa: 0.98)
    warmup: float = 0.1  # share of the steps spent warming the learning rate up from 0
    schedule: str = "linear"  # see SCHEDULES
    decay: float = 0.2  # with "stable-decay": share of the steps cooling the learning rate down to 0
    max_grad_norm: float = 1.0  # global-norm clipping (BERT: 1.0)
    # --- length of the run ---
    steps: int | None = None  # optimizer steps; None: as many as fit in `minutes` on this machine
    minutes: float | None = 15.0  # wall-clock limit of the run (None: no limit, `steps` decides)
    # --- bookkeeping ---
    seed: int = 0  # initial weights, dropout, batch order and dynamic masks
    # the speed layer (minibert/fast): fused layers and the pruned last layer, which give the same numbers up to
    # float32 rounding but draw dropout from another stream, so a resumed run keeps the choice; True: the
    # core's plain layers alone (slower)
    plain: bool = False
    # cores the matmuls and the Numba kernels share (None: every core), with the speed layer's process plan
    # (minibert/fast/process.py)
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
            check_whole(name, getattr(self, name), minimum=1)
        check_whole("seed", self.seed, minimum=0)
        if self.threads is not None:
            check_whole("threads", self.threads, minimum=1)
        if self.steps is not None:
            check_whole("steps", self.steps, minimum=1)
        if self.eval_batches is not None:
            check_whole("eval_batches", self.eval_batches, minimum=1)
        if self.dupe_factor is not None:
            check_whole("dupe_factor", self.dupe_factor, minimum=1)
        if self.steps is None and self.minutes is None:
            raise ConfigError("a run needs an end: give steps (e.g. 1000) or minutes (e.g. 15)")
        for name in ("minutes", "eval_every_minutes"):
            value = getattr(self, name)
            if value is not None and not (is_number(value) and value > 0):
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
            check_whole("short_seq_length", self.short_seq_length, minimum=8)
            if self.max_seq_length % self.short_seq_length or self.short_seq_length == self.max_seq_length:
                raise ConfigError(f"short_seq_length={self.short_seq_length} must divide max_seq_length="
                                  f"{self.max_seq_length} and be shorter (e.g. {self.max_seq_length // 2}), so a "
                                  "short batch holds the same tokens as a long one")
        if not (is_number(self.short_share) and 0 <= self.short_share < 1):
            raise ConfigError(f"short_share={self.short_share!r} is the share of steps on short sequences: a "
                              "number in [0, 1), e.g. 0.7")
        if self.optimizer not in RULES:
            raise ConfigError(f"optimizer={self.optimizer!r}; choose one of {', '.join(RULES)}")
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"schedule={self.schedule!r}; choose one of {', '.join(SCHEDULES)}")
        if self.position_init not in ("normal", "sinusoidal"):
            raise ConfigError(f"position_init={self.position_init!r}; choose 'normal' (BERT) or 'sinusoidal'")
        if self.attention_init not in ("normal", "mimetic"):
            raise ConfigError(f"attention_init={self.attention_init!r}; choose 'normal' (BERT) or 'mimetic'")
        if self.attention not in ("bidirectional", "causal"):
            raise ConfigError(f"attention={self.attention!r}; choose 'bidirectional' (BERT) or "
                              "'causal' (GPT)")
        if not (is_number(self.lr) and 0 < self.lr < 1):
            raise ConfigError(f"lr={self.lr!r} must be a number in (0, 1), e.g. 1e-3")
        if not (is_number(self.masked_lm_prob) and 0 < self.masked_lm_prob < 1):
            raise ConfigError(f"masked_lm_prob={self.masked_lm_prob!r} must be a number in (0, 1) (BERT: 0.15)")
        if not all(is_number(value) and value >= 0 for value in (self.mask_token_prob, self.random_token_prob)) \
                or self.mask_token_prob + self.random_token_prob > 1:
            raise ConfigError(f"mask_token_prob={self.mask_token_prob!r} and random_token_prob="
                              f"{self.random_token_prob!r} must be numbers >= 0 with a sum of at most 1 "
                              "(BERT: 0.8 and 0.1)")
        if self.sentence_task not in ("nsp", "sop"):
            raise ConfigError(f"sentence_task={self.sentence_task!r}; choose 'nsp' (BERT) or 'sop' (ALBERT), "
                              "or use_nsp=False (--no-nsp) for no sentence-pair loss")
        if not (is_number(self.adam_beta2) and 0 < self.adam_beta2 < 1):
            raise ConfigError(f"adam_beta2={self.adam_beta2!r} must be a number in (0, 1) (BERT: 0.999)")
        if not (is_number(self.weight_decay) and self.weight_decay >= 0):
            raise ConfigError(f"weight_decay={self.weight_decay!r} must be a number >= 0 (BERT: 0.01)")
        if not (is_number(self.warmup) and 0 <= self.warmup < 1):
            raise ConfigError(f"warmup={self.warmup!r} is the share of steps spent warming up: a number in "
                              "[0, 1), e.g. 0.1")
        if not (is_number(self.decay) and 0 <= self.decay <= 1 - self.warmup):
            raise ConfigError(f"decay={self.decay!r} is the share of steps cooling down: a number in [0, "
                              f"1 - warmup], e.g. 0.2")
        if not (is_number(self.dropout) and 0 <= self.dropout < 1):
            raise ConfigError(f"dropout={self.dropout!r} must be a number in [0, 1) (BERT: 0.1)")
        if not (is_number(self.max_grad_norm) and self.max_grad_norm > 0):
            raise ConfigError(f"max_grad_norm={self.max_grad_norm!r} must be a number > 0 (BERT: 1.0)")

    def optimizer_settings(self):
        """The run's optimizer, as `minibert.optim.bert_optimizer(model.named_parameters(), **these)` builds it:
        its update rule, peak rate, weight decay and Adam's betas (BERT's first, the run's second)."""
        return dict(lr=self.lr, rule=self.optimizer, weight_decay=self.weight_decay,
                    betas=(BERT_DEFAULTS["betas"][0], self.adam_beta2))

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


RUN_PRESETS = {
    "tiny": PretrainingConfig(model="tiny", corpus="synthetic", vocab_size=1024, max_seq_length=64,
                              max_predictions_per_seq=10, batch_size=32, lr=3e-3, steps=800, minutes=None,
                              log_every=10, eval_every=200, eval_batches=10, checkpoint_every=200),
    # `mini` keeps BERT's masking rate, schedule, position start and data passes in the dataclass, and changes
    # what a run of about a thousand steps needs (docs/learning.md measures each change, kept or not):
    # - AdamW at lr 1e-3 (bias correction on), 10% warmup, dropout off: a short run underfits, it never reaches
    #   the overfitting dropout guards against (Geiping & Goldstein 2022, "Cramming", §4.3);
    # - the first steps on 32-token sequences (as BERT's §A.2 for speed, here because attention over few tokens
    #   finds its neighbours sooner), with as many more sequences per batch;
    # - 30% of each training sequence masked instead of 15% (Wettig et al. 2023, "Should You Mask 15% in Masked
    #   Language Modeling?"): twice the predictions per step for little more work, since the MLM head runs on
    #   the masked positions only; held-out text is still masked at 15%;
    # - the learning rate held at its peak until the last 20% of the steps ("stable-decay");
    # - the learned position table starts at the Transformer's sinusoids (minibert/model/position_init.py);
    # - next-sentence prediction trained on the 128-token steps only: the short steps train the masked LM alone.
    # Its model is 4 layers, H 256, on `pydocs` at 128 tokens, batch 32; the default run takes 15 minutes,
    # set-up included.
    "mini": PretrainingConfig(short_seq_length=32, short_share=0.6, short_phase_nsp=False, masked_lm_prob=0.3,
                              max_predictions_per_seq=40, schedule="stable-decay", position_init="sinusoidal"),
}

# Steps the `mini` recipe takes to pass 30% held-out MLM accuracy (docs/learning.md: 22.2% at step 600 of a
# 900-step run, 33.4% at step 750; 800 leaves a margin). 15 minutes fit fewer on a slow CPU (453 on a 2-core
# Zen 1), so a run of the `mini` model planned from the clock that fits fewer says so when it starts, and how
# long would do.
MINI_STEPS_TO_LEARN = 800


def run_preset(name, **overrides):
    """The named run preset with some fields overridden: `run_preset("tiny", steps=50, seed=1)`."""
    if name not in RUN_PRESETS:
        raise ConfigError(f"unknown run preset {name!r}; choose one of {', '.join(RUN_PRESETS)}")
    return RUN_PRESETS[name].replace(**overrides)
