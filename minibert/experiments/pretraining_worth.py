"""`pretraining-worth`: what is pretraining worth as the labelled data shrinks?

The same task fine-tuned from a pretrained encoder and from random weights of the same shape, on 1%, 10%
and 100% of its training set (the dev set stays whole). The model is pretrained once per seed and
fine-tuned at each size. The paper's claim (§5.2, and the reason fine-tuning takes only a few epochs) is
that pretraining carries the small tasks; it shows most where labels are few.

Quick mode: synthetic sentiment. Full mode: real text no one here wrote, which library a documentation
sentence comes from (`package-topics`, minibert/data/corpora/package_topics.py), after pretraining on `pydocs`.
"""

from minibert.experiments.downstream import fine_tune_score, load_task
from minibert.experiments.pretraining import pretrain_in_memory
from minibert.experiments.runner import Experiment
from minibert.experiments.setup import base_settings, data_dir, run_config

SHARES = {"1": 0.01, "10": 0.10, "100": 1.0}
ARMS = {f"{start}-{share}": f"{start}, {share}% of the data" for share in SHARES for start in ("pretrained", "random")}
METRICS = {"score": "dev accuracy (%)"}


def settings(mode):
    if mode == "quick":
        return base_settings(mode, task="sentiment", train_size=2000)
    # real text needs a model that read real text: pydocs, its 8192-token vocabulary
    return base_settings(mode, task="package-topics", pretrain={"corpus": "pydocs", "vocab_size": 8192})


def run(arm, seed, settings, shared):
    start, share = arm.split("-")
    if "pretrained" not in shared:
        shared["pretrained"] = pretrain_in_memory(run_config(settings, seed), data_dir(settings))
    pretrained = shared["pretrained"]
    data = load_task(settings["task"], pretrained.tokenizer, settings["train_size"], settings["dev_size"])
    count = max(2, round(SHARES[share] * len(data.train)))
    train = data.train[:count]
    return {"score": fine_tune_score(pretrained.model, data, seed, settings["epochs"],
                                     random_init=start == "random", train=train), "train_examples": count}


EXPERIMENT = Experiment(
    name="pretraining-worth",
    metrics=lambda mode: METRICS, arms=lambda mode: ARMS, settings=settings, run=run,
    note=("the gap between the pretrained and the random rows at each size is what pretraining is "
          "worth there."))
