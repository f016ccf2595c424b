"""`mask-rate`: how much of each sequence to hide? BERT's 15% (paper §3.1) against 5%, 30% and 50%.

Too little masking gives few predictions per step (little signal); too much destroys the context the
predictions need. Every arm is measured on the same yardstick: held-out masked-LM accuracy with 15% of
the tokens masked (minibert/train/pretraining_setup.py masks held-out text at 15% whatever the run's rate), and
in full mode sentiment fine-tuning (after quick mode's 80 steps it stays at chance). Wettig et al. (2023,
"Should You Mask 15% in Masked Language Modeling?") found 40% better than 15% for large models; the `mini`
preset trains at 30% for that reason.
"""

from minibert.experiments.downstream import fine_tune_score, load_task
from minibert.experiments.pretraining import held_out_mlm_accuracy, pretrain_in_memory
from minibert.experiments.runner import Experiment
from minibert.experiments.setup import base_settings, by_mode, data_dir, eval_batches, measures, run_config

RATES = {"5": 0.05, "15": 0.15, "30": 0.30, "50": 0.50}
ARMS = {arm: f"{arm}%" + (" (BERT)" if arm == "15" else "") for arm in RATES}
MLM = "held-out MLM accuracy at 15% (%)"
METRICS = {"quick": {"mlm": MLM}, "full": {"mlm": MLM, "finetune": "sentiment, fine-tuned (%)"}}


def settings(mode):
    return base_settings(mode, METRICS)


def arm_config(arm, seed, settings):
    """The PretrainingConfig of one run of `arm`: its masking rate is the only change."""
    return run_config(settings, seed, masked_lm_prob=RATES[arm])


def run(arm, seed, settings, shared):
    pretrained = pretrain_in_memory(arm_config(arm, seed, settings), data_dir(settings))
    scores = {"mlm": held_out_mlm_accuracy(pretrained, eval_batches(settings))}
    if "finetune" in measures(settings, METRICS):
        sentiment = load_task("sentiment", pretrained.tokenizer, settings["train_size"], settings["dev_size"])
        scores["finetune"] = fine_tune_score(pretrained.model, sentiment, seed, settings["epochs"])
    return scores


EXPERIMENT = Experiment(
    name="mask-rate",
    metrics=by_mode(METRICS), arms=lambda mode: ARMS, settings=settings, run=run, config=arm_config,
    note=("held-out MLM accuracy is read at 15% for every arm, so a high rate is not judged on an "
          "easier or harder test than a low one."))
