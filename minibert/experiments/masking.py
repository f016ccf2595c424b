"""`masking`: what should a chosen token look like? The paper's Table 8 (appendix C.2).

Of the 15% of tokens chosen for prediction, BERT shows 80% as [MASK], leaves 10% unchanged (SAME) and
replaces 10% with a random token (RND). The arms are the paper's six mixes, MASK/SAME/RND:
80/10/10, 100/0/0, 80/0/20, 80/20/0, 0/20/80 and 0/0/100 (`mask_token_prob` and `random_token_prob` of
the PretrainingConfig, minibert/data/masking.py).

Measured by fine-tuning (sentiment) and feature-based, on the frozen encoder (a linear tagger on each
word's vector for NER, as the paper's feature-based NER). The paper's point: [MASK] never appears
downstream, so a model trained only on [MASK] has learned less about real tokens, which fine-tuning can
repair and frozen features cannot. Quick mode's 70 steps are too few for either: it measures instead how
well the masked LM recovers held-out tokens shown as themselves (`unchanged_token_accuracy`), the bias
toward the observed word that the SAME share is there to give, beside the feature-based NER.
"""

from minibert.experiments.downstream import fine_tune_score, load_task, tagging_feature_f1
from minibert.experiments.pretraining import pretrain_in_memory, unchanged_token_accuracy
from minibert.experiments.runner import Experiment
from minibert.experiments.setup import base_settings, by_mode, data_dir, eval_batches, measures, run_config

MIXES = {"80-10-10": (80, 10, 10), "100-0-0": (100, 0, 0), "80-0-20": (80, 0, 20), "80-20-0": (80, 20, 0),
         "0-20-80": (0, 20, 80), "0-0-100": (0, 0, 100)}
ARMS = {arm: "/".join(str(share) for share in mix) + (" (BERT)" if arm == "80-10-10" else "")
        for arm, mix in MIXES.items()}
NER_FEATURES = "NER, feature-based F1 (%)"
METRICS = {"quick": {"unchanged": "unchanged tokens recovered (%)", "ner_features": NER_FEATURES},
           "full": {"finetune": "sentiment, fine-tuned (%)", "ner_features": NER_FEATURES}}


def settings(mode):
    # quick mode: 70 steps, not 80, so that lesson 19's 18 runs fit in its minute; the SAME share's effect
    # (the first quick column) shows by then
    return base_settings(mode, METRICS, **({"pretrain": {"steps": 70}} if mode == "quick" else {}))


def arm_config(arm, seed, settings):
    """The PretrainingConfig of one run of `arm`: its mix of [MASK], unchanged and random is the only change."""
    mask, _, random = MIXES[arm]
    return run_config(settings, seed, mask_token_prob=mask / 100, random_token_prob=random / 100)


def run(arm, seed, settings, shared):
    pretrained = pretrain_in_memory(arm_config(arm, seed, settings), data_dir(settings))
    scores = {}
    if "unchanged" in measures(settings, METRICS):
        scores["unchanged"] = unchanged_token_accuracy(pretrained, eval_batches(settings))
    if "finetune" in measures(settings, METRICS):
        sentiment = load_task("sentiment", pretrained.tokenizer, settings["train_size"], settings["dev_size"])
        scores["finetune"] = fine_tune_score(pretrained.model, sentiment, seed, settings["epochs"])
    ner = load_task("ner", pretrained.tokenizer, settings["train_size"], settings["dev_size"])
    scores["ner_features"] = tagging_feature_f1([(pretrained.model, False)], ner)
    return scores


EXPERIMENT = Experiment(
    name="masking",
    metrics=by_mode(METRICS), arms=lambda mode: ARMS, settings=settings, run=run, config=arm_config,
    note=("the paper: fine-tuning barely cares (MNLI 83.6-84.4); feature-based NER loses most with "
          "100% [MASK] (94.0 against 94.9 for 80/10/10)."))
