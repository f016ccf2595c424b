"""The experiments lab: the paper's ablations, rerun on a laptop (`python -m minibert experiment NAME`).

Each experiment is a controlled comparison: its arms differ in one thing and share the data, the budget in
steps and the seeds, and every arm runs with 3 seeds or more. It prints a table (mean ± spread), draws an
SVG and writes a JSON of results; it shows progress with an ETA, and can be stopped and resumed.
docs/experiments.md holds a full run of each, beside what the paper reported. Two measure checkpoints made
outside them (by `python -m minibert pretrain`, or a real BERT) on real text: `ladder` and `sentence-task`.
"""

# Read in this order:
# runner.py             Experiment, and running its arms x seeds with one saved record per run (resume)
# summary.py            mean, sample standard deviation, min and max per arm and metric
# table.py              the printed table
# results.py            results.json (command, date, CPU, settings, every run, summary) and the SVG
# setup.py              what every experiment shares in quick and full mode
# pretraining.py        pretraining in memory with the pretraining loop's own step
# downstream.py         the tasks, fine-tuning, and features from a frozen encoder (with the linear
#                       classifier of minibert/finetune/linear_probe.py)
# direction.py, masking.py, mask_rate.py, nsp.py, pretraining_worth.py, size.py: the six experiments of
#                       one variable each
# ladder_arms.py        the ladder's names: its rungs, its ways, an arm's name
# ladder_tasks.py       the ladder's tasks, cut into train, validation and test splits
# ladder_tuning.py      its protocol: one recipe and tuning budget, chosen on validation, scored on test
# bootstrap.py          the test set's own noise: a bootstrap interval over its documents
# ladder_provenance.py  each rung's checkpoint by sha256, with its pretraining log
# ladder_table.py, ladder_figure.py, ladder.py: its tables, its picture, the ladder itself
# sentence_task.py      the ladder's measures on checkpoints pretrained with NSP, SOP or no sentence loss

import importlib

# name -> (module, one line for `experiment --help`)
EXPERIMENTS = {
    "direction": ("minibert.experiments.direction",
                  "bidirectional vs left-to-right vs ELMo-like, on the right-context probe and NER features"),
    "masking": ("minibert.experiments.masking",
                "the [MASK]/same/random mixes of the paper's Table 8, fine-tuned and feature-based"),
    "mask-rate": ("minibert.experiments.mask_rate", "masking 5, 15, 30 or 50% of each sequence"),
    "nsp": ("minibert.experiments.nsp", "next-sentence prediction vs none vs sentence order, on sentence pairs"),
    "pretraining-worth": ("minibert.experiments.pretraining_worth",
                          "pretrained vs random init with 1%, 10% and 100% of the task's data"),
    "size": ("minibert.experiments.size", "tiny vs a deeper tiny vs mini, at equal steps and equal wall time"),
    "ladder": ("minibert.experiments.ladder",
               "random weights, 15 and 60 minutes of pretraining, a real BERT: on real text, few labels"),
    "sentence-task": ("minibert.experiments.sentence_task",
                      "NSP vs SOP vs none at the 15-minute rung, on real sentence pairs (doc-pairs)"),
}


def load_experiment(name):
    """The `Experiment` of `name` (a key of EXPERIMENTS)."""
    return importlib.import_module(EXPERIMENTS[name][0]).EXPERIMENT
