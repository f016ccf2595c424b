"""What every experiment shares in each mode: the pretraining recipe, the budget, the fine-tuning sets.

- quick: about a minute per experiment, for the lessons: the `tiny` model on `synthetic`, 80 steps, small
  task sets. 80 steps leave the model in its first phase (held-out masked-LM accuracy about 5%, near always
  guessing the commonest tokens), where fine-tuning a few hundred examples stays at chance; so quick mode
  measures what has moved by then where an experiment has such a measure (each experiment's `METRICS`
  says what each mode measures; docs/experiments.md, "Quick mode", what the measures showed).
- full: what docs/experiments.md reports: the same model and corpus with ten times the steps and the whole
  fine-tuning sets, so that each experiment takes about 10 minutes on 2 cores.
- mini: the full mode on the `mini` model (4 layers, width 256, BERT-Mini) at its preset's learning rate:
  the same steps, data and sets as full, each model about 20 times the work of a `tiny` one, so minutes per
  arm and an hour or more per experiment (docs/experiments.md says what each took).

Every arm of an experiment starts from these and changes one thing. No arm trains the NSP loss except in
the `nsp` experiment (the paper's Table 5 compares the directions without it too), and dropout is off (a
short run underfits; see the `mini` preset's notes in minibert/train/pretraining_config.py).
"""

from pathlib import Path

from minibert.data.corpora import CORPORA
from minibert.data.location import data_folder
from minibert.train.pretraining_config import RUN_PRESETS, run_preset

# masked positions per 64-token sequence: room for the 50% arm of `mask-rate`, the same in every
# experiment so that they share one build of the data (at 15%, 10 positions are used)
MAX_PREDICTIONS = 32

MODES = {
    # eval_batches: held-out measures read 10 batches (320 sequences, about 3,000 masked tokens), not the
    # whole split (61 batches: 2 s a run for `tiny`, more for `mini`); full mode reads it all
    "quick": {"pretrain": {"steps": 80}, "train_size": 400, "dev_size": 200, "epochs": 2, "eval_batches": 10},
    # epochs None: the finetune command's default, 3 or more for a small set (minibert/finetune/plateau.py)
    "full": {"pretrain": {"steps": 800}, "train_size": None, "dev_size": None, "epochs": None},
}
MODES["mini"] = {**MODES["full"],
                 "pretrain": {**MODES["full"]["pretrain"], "model": "mini", "lr": RUN_PRESETS["mini"].lr}}
LONG_MODES = ("full", "mini")  # the modes docs/experiments.md reports: the whole sets, real text where asked


def base_settings(mode, metrics=None, **changes):
    """The JSON-able settings of `mode`, with `changes` on top (nested "pretrain" dicts merge).

    metrics: the experiment's {mode: {metric: title}}; in quick mode the settings name the metrics to
    measure ("measures", read by `measures`), so a quick run saved before they changed is not mixed in."""
    settings = {**MODES[mode], "pretrain": {"model": "tiny", "corpus": "synthetic", "max_seq_length": 64,
                                            "max_predictions_per_seq": MAX_PREDICTIONS, "batch_size": 32,
                                            "lr": 3e-3, "use_nsp": False, "dropout": 0.0,
                                            **MODES[mode]["pretrain"]}}
    for name, value in changes.items():
        settings[name] = {**settings[name], **value} if name == "pretrain" else value
    if metrics is not None and mode == "quick":
        settings["measures"] = list(metrics["quick"])
    return settings


def by_mode(metrics):
    """An Experiment's `metrics`: mode -> {metric: title} from {"quick": ..., "full": ...}; mini mode
    measures what full mode does."""
    return lambda mode: metrics["quick" if mode == "quick" else "full"]


def measures(settings, metrics):
    """The metrics a run of `settings` measures: the quick ones its settings name, or the full mode's (full
    settings have no "measures", as when the runs of docs/experiments.md were made, so those still resume)."""
    return settings.get("measures", list(metrics["full"]))


def eval_batches(settings):
    """How many held-out batches a measure reads (None: all, in full mode)."""
    return settings.get("eval_batches")


def run_config(settings, seed, **changes):
    """The PretrainingConfig of one run: the `tiny` preset with the settings' pretraining fields (its model: `tiny`,
    or `mini` in mini mode) and `changes`."""
    return run_preset("tiny", **{**settings["pretrain"], **changes}, seed=seed, minutes=None)


def data_dir(settings):
    """Where the corpus and its shards live, as the pretrain command keeps them: <data folder>/<name> for a built-in
    corpus, the folder of a corpus file otherwise."""
    corpus = settings["pretrain"]["corpus"]
    return data_folder() / corpus if corpus in CORPORA else Path(corpus).parent
