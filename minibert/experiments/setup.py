"""What every experiment shares in each mode: the pretraining recipe, the budget, the fine-tuning sets.

- quick: about a minute per experiment, for the lessons: the `tiny` model on `synthetic`, a few dozen
  steps, small fine-tuning sets. It shows the machinery and the shape of the table; its differences are
  mostly noise.
- full: what docs/experiments.md reports: the same model and corpus with ten times the steps and the whole
  fine-tuning sets, so that each experiment takes about 10 minutes on 2 cores.
- mini: the full mode on the `mini` model (4 layers, width 256, BERT-Mini) at its preset's learning rate:
  the same steps, data and sets as full, each model about 20 times the work of a `tiny` one, so minutes per
  arm and an hour or more per experiment (docs/experiments.md says what each took).

Every arm of an experiment starts from these and changes one thing. No arm trains the NSP loss except in
the `nsp` experiment (the paper's Table 5 compares the directions without it too), and dropout is off (a
short run underfits; see the `mini` preset's notes in minibert/train/presets.py).
"""

from pathlib import Path

from minibert.data.corpora import CORPORA
from minibert.train.presets import run_preset

# masked positions per 64-token sequence: room for the 50% arm of `mask-rate`, the same in every
# experiment so that they share one build of the data (at 15%, 10 positions are used)
MAX_PREDICTIONS = 32

MODES = {
    "quick": {"pretrain": {"steps": 80}, "train_size": 400, "dev_size": 200, "epochs": 2},
    # epochs None: the finetune command's default, 3 or more for a small set (minibert/finetune/plateau.py)
    "full": {"pretrain": {"steps": 800}, "train_size": None, "dev_size": None, "epochs": None},
}
MODES["mini"] = {**MODES["full"], "pretrain": {**MODES["full"]["pretrain"], "model": "mini", "lr": 1e-3}}
LONG_MODES = ("full", "mini")  # the modes docs/experiments.md reports: the whole sets, real text where asked


def base_settings(mode, **changes):
    """The JSON-able settings of `mode`, with `changes` on top (nested "pretrain" dicts merge)."""
    settings = {**MODES[mode], "pretrain": {"model": "tiny", "corpus": "synthetic", "max_seq_length": 64,
                                            "max_predictions_per_seq": MAX_PREDICTIONS, "batch_size": 32,
                                            "lr": 3e-3, "use_nsp": False, "dropout": 0.0,
                                            **MODES[mode]["pretrain"]}}
    for name, value in changes.items():
        settings[name] = {**settings[name], **value} if name == "pretrain" else value
    return settings


def run_config(settings, seed, **changes):
    """The RunConfig of one run: the `tiny` preset with the settings' pretraining fields (its model: `tiny`,
    or `mini` in mini mode) and `changes`."""
    return run_preset("tiny", **{**settings["pretrain"], **changes}, seed=seed, minutes=None)


def data_dir(settings):
    """Where the corpus and its shards live, as the pretrain command keeps them: data/<name> for a built-in
    corpus, the folder of a corpus file otherwise."""
    corpus = settings["pretrain"]["corpus"]
    return Path("data", corpus) if corpus in CORPORA else Path(corpus).parent
