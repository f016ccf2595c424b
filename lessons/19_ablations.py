# %% [markdown]
# # Lesson 19 — rerun the paper's ablations
#
# The course so far *shows* the mechanisms: the masks (05), the 80/10/10 routine (08), the NSP pairs (09).
# The paper argues for each of them with an ablation: a model pretrained without it, measured after. This
# lesson reruns three of those arguments with `python -m minibert experiment` (minibert/experiments/):
#
# - `masking`: what a chosen token should look like, [MASK] / unchanged / random (the paper's Table 8);
# - `mask-rate`: how much of each sequence to hide, 5, 15, 30 or 50%;
# - `nsp`: BERT's next-sentence prediction, no sentence loss (RoBERTa), or sentence order (ALBERT).
#
# An experiment is a *controlled* comparison: its arms differ in one thing, share the data, the steps and
# the seeds, and each arm runs with 3 seeds, because one run of a small model says little: the table shows
# the mean ± the sample standard deviation over the seeds, and a difference smaller than the spreads is
# noise, not a finding.

# %%
import dataclasses
import io
import json
import os

import course

from minibert.experiments import load_experiment
from minibert.experiments.runner import run_experiment
from minibert.experiments.summary import summarize_runs
from minibert.experiments.table import format_table
from minibert.train.run_setup import train_fast

os.chdir(course.ROOT)  # the experiments read data/synthetic, as the commands do from the repository root
train_fast()
FIGURES = course.ROOT / "docs" / "figures"

# %% [markdown]
# ## A small experiment, run here
#
# Two arms of `mask-rate`, 15% (BERT) and 50%, 3 seeds each, in quick mode: 80 steps of the `tiny` model per
# run, then held-out masked-LM accuracy (always measured with 15% masked, the same test for both) and a
# short fine-tuning on sentiment. Each run's result is saved as it ends; stopped and started again, the
# runner skips what is done (`--full` runs all three experiments in full, about 40 minutes).

# %%
mode = "full" if course.FULL else "quick"
if course.FULL:
    experiments = [load_experiment(name) for name in ("masking", "mask-rate", "nsp")]
else:
    mask_rate = load_experiment("mask-rate")
    two_arms = {arm: label for arm, label in mask_rate.arms("quick").items() if arm in ("15", "50")}
    experiments = [dataclasses.replace(mask_rate, arms=lambda mode: two_arms)]
for experiment in experiments:
    course.title(f"{experiment.name}, {mode} mode, run here")
    records = run_experiment(experiment, mode, 3, course.OUTPUT / f"19_{experiment.name}-{mode}",
                             stream=io.StringIO())
    arms = experiment.arms(mode)
    print(format_table(summarize_runs(records, arms, experiment.metrics), experiment.metrics, arms))

# %% [markdown]
# 80 steps teach the tiny model little beyond which tokens are frequent (held-out MLM accuracy of a few
# percent), and 26 fine-tuning steps do not lift sentiment off chance (50%: always one label). The machinery
# works; the budget is too small to decide much. Before believing a difference between two rows, compare
# it with their spreads: **a difference is a finding only when it is larger than the noise**.
#
# ## The full runs, and what to look for
#
# docs/experiments.md holds a full run of each experiment (800 steps per model, the whole fine-tuning sets;
# about 10 minutes each on 2 cores), beside what the papers reported. Their results are stored next to
# their pictures in docs/figures/; here they are read back.

# %%
LOOK_FOR = {
    "masking": "Read the feature-based column: the arms that never leave a chosen token unchanged (100/0/0, "
               "80/0/20, 0/0/100) do worst, as the paper's Table 8 says (there by about a point, here by "
               "more). The fine-tuned column mostly says whether fine-tuning left chance at all.",
    "mask-rate": "Held-out MLM accuracy is measured at 15% for every arm. Too little masking gives few "
                 "predictions per step; too much leaves too little context to predict from.",
    "nsp": "Each sentence loss practises one of the two pair tasks: NSP is 'same story?', SOP is 'in "
           "order?'. Does either transfer to the other task, and is it outside the noise?",
}
for name, what in LOOK_FOR.items():
    course.title(f"{name}, full mode (docs/experiments.md)")
    stored = FIGURES / f"experiment-{name}.json"
    if not stored.is_file():
        print(f"(no stored full run at {stored}: run `python -m minibert experiment {name} --full`)")
        continue
    record = json.loads(stored.read_text(encoding="utf-8"))
    summaries = summarize_runs(record["runs"], record["arms"], record["metrics"])
    print(format_table(summaries, record["metrics"], record["arms"]))
    print(f"{record['command']}; {record['date']}; {record['cpu']}")
    print(f"What to look for: {what}")
