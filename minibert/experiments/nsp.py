"""`nsp`: does a sentence-pair loss help sentence-pair tasks? The paper's Table 5, RoBERTa and ALBERT.

Three arms, the same masked LM, data, steps and seed, differing in the second loss:
    nsp    BERT's next-sentence prediction: is B the sentence after A, or from another document?
    none   no sentence loss (the paper's "No NSP"; RoBERTa drops it)
    sop    ALBERT's sentence-order prediction: are A and B in their order, or swapped?

Measured by fine-tuning on two sentence-pair tasks from stories the corpus does not hold
(minibert/data/corpora/synthetic_pairs.py): `coherence` (same story or not, what NSP practises) and
`order` (in order or swapped, what SOP practises). The paper found removing NSP cost QNLI 3.5 points;
RoBERTa found it cost nothing when the inputs were full sentences; ALBERT found NSP learns topic rather
than coherence and that SOP does better.
"""

from minibert.experiments.downstream import fine_tune_score, load_task
from minibert.experiments.pretraining import pretrain_in_memory
from minibert.experiments.runner import Experiment
from minibert.experiments.setup import base_settings, data_dir, run_config

ARMS = {"nsp": "NSP (BERT)", "none": "none (RoBERTa)", "sop": "SOP (ALBERT)"}
CHANGES = {"nsp": {"use_nsp": True, "sentence_task": "nsp"}, "none": {"use_nsp": False},
           "sop": {"use_nsp": True, "sentence_task": "sop"}}
PAIR_SIZES = {"quick": (400, 200), "full": (2000, 500)}
METRICS = {"coherence": "coherence pairs, fine-tuned (%)", "order": "order pairs, fine-tuned (%)"}


def settings(mode):
    train, dev = PAIR_SIZES[mode]
    return base_settings(mode, pair_train_size=train, pair_dev_size=dev)


def run(arm, seed, settings, shared):
    pretrained = pretrain_in_memory(run_config(settings, seed, **CHANGES[arm]), data_dir(settings))
    scores = {}
    for task in METRICS:
        data = load_task(task, pretrained.tokenizer, settings["pair_train_size"], settings["pair_dev_size"])
        scores[task] = fine_tune_score(pretrained.model, data, seed, settings["epochs"])
    return scores


EXPERIMENT = Experiment(
    name="nsp",
    metrics=METRICS, arms=lambda mode: ARMS, settings=settings, run=run,
    note=("each loss practises one of the two tasks; the question is what transfers, and whether "
          "any of it shows after fine-tuning."))
