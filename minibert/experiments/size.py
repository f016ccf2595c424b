"""`size`: does a larger model do better, at equal steps and at equal wall time? The paper's Table 6.

Three sizes: `tiny` (2 layers, H 64), `tiny-deep` (4 layers, H 64) and `mini` (4 layers, H 256, BERT-Mini).
Each is trained twice: for the same number of steps (the paper's comparison: bigger is better, even on
small tasks), and for the same wall time on this machine (a laptop's question: a bigger model takes fewer
steps in the same minutes). The time arms plan their steps from the measured time of a step
(pretraining_setup.measure_pass_seconds), so they depend on the machine and its load; each records its steps.
Measured on held-out masked-LM accuracy (the paper's LM perplexity column) and on NER with frozen features
(a linear tagger on each word's vector), which costs no fine-tuning: `mini` fine-tuning for the finetune
command's 500 steps would cost more than its pretraining.
"""

from minibert.experiments.downstream import load_task, tagging_feature_f1
from minibert.experiments.pretraining import held_out_mlm_accuracy, open_run, pretrain_in_memory
from minibert.experiments.runner import Experiment
from minibert.experiments.setup import base_settings, data_dir, eval_batches, run_config
from minibert.fast import process_plan
from minibert.train.pretraining_config import RUN_PRESETS
from minibert.train.step_plan import measure_pass_seconds

MODELS = {"tiny": "tiny (2x64)", "tiny-deep": "tiny-deep (4x64)", "mini": "mini (4x256)"}
ARMS = {f"{model}-{budget}": f"{label}, equal {budget}" for budget in ("steps", "time") for model, label in
        MODELS.items()}
METRICS = {"mlm": "held-out MLM accuracy (%)", "ner_features": "NER, feature-based F1 (%)"}
LEARNING_RATES = {"tiny": RUN_PRESETS["tiny"].lr, "tiny-deep": RUN_PRESETS["tiny"].lr, "mini": RUN_PRESETS["mini"].lr}
# mini's step costs about 20 tiny steps here, so the budget is what 3 seeds of mini can afford: in quick
# mode, a minute for all 18 runs (at 20 steps the mini arms alone took over 2 minutes); mini mode gives every
# size the other experiments' 800 steps, and the time mini takes for them (about 4 minutes)
BUDGETS = {"quick": {"steps": 10, "seconds": 1.0}, "full": {"steps": 120, "seconds": 30.0},
           "mini": {"steps": 800, "seconds": 240.0}}


def settings(mode):
    budget = BUDGETS[mode]
    return base_settings(mode, time_seconds=budget["seconds"], pretrain={"steps": budget["steps"]})


def steps_in(config, settings, seconds):
    """How many steps of `config` fit in `seconds` here: a step is a measured pass and about 15% more
    (clipping, the optimizer, the next batch), as the pretrain command plans."""
    _, train_batches, _, model = open_run(config, data_dir(settings))
    with process_plan(config.threads):
        pass_seconds = measure_pass_seconds(model, next(train_batches.epoch(0)), config.use_nsp)
    return max(1, int(seconds / (pass_seconds * 1.15)))


def run(arm, seed, settings, shared):
    model, _, budget = arm.rpartition("-")
    # each size at its own preset's learning rate (a wider model wants a lower one: mini 1e-3, tiny 3e-3)
    config = run_config(settings, seed, model=model, lr=LEARNING_RATES[model])
    steps = config.steps if budget == "steps" else steps_in(config, settings, settings["time_seconds"])
    pretrained = pretrain_in_memory(config, data_dir(settings), steps=steps)
    ner = load_task("ner", pretrained.tokenizer, settings["train_size"], settings["dev_size"])
    return {"mlm": held_out_mlm_accuracy(pretrained, eval_batches(settings)),
            "ner_features": tagging_feature_f1([(pretrained.model, False)], ner), "steps": steps}


EXPERIMENT = Experiment(
    name="size",
    metrics=lambda mode: METRICS, arms=lambda mode: ARMS, settings=settings, run=run,
    note=("at equal steps size should win; at equal time the small model takes many more steps, "
          "and on a laptop that can matter more."))
