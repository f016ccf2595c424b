"""Pretraining BERT: the loop, what it builds before its first step, and what it writes as it goes.

Start with pretraining_config.py (every setting of a run) and pretraining_loop.py (the loop: log, evaluate, checkpoint
when due; then one step: batch -> model -> loss -> backward -> clip -> optimizer -> schedule); then the
helpers it calls. The tools that look at the trained model (fill-mask, attention, sentence vectors, the
probe) are in minibert/inspect/. The comment below lists every module in reading order.
"""

# Read in this order:
# pretraining_config.py PretrainingConfig: every setting of a run, and the `tiny` and `mini` presets
# pretraining_loop.py   the loop, which assigns its own state: evaluate, checkpoint, stop or take a step
# pretraining_run.py    a run's objects, opened fresh or from its checkpoint; what the loop asks of them
# pretraining_setup.py  what a run builds before its first step: data, model, schedule, the resume checks
# step_plan.py          the clock budget: the steps that fit in the minutes, planned, and plans proposed again
# update.py             the one pretraining step (`train_step`) and the update after any loss (`checked_update`)
# nonfinite.py          where a NaN or an infinity is, so a diverged run names the parameter
# interrupt.py          Ctrl-C as a request to stop after the current step
# metrics.py            masked-LM and NSP accuracy, counted
# evaluate.py           held-out evaluation on the split the model never trains on
# guesses.py            the model's top guesses for held-out blanks, shown at each evaluation
# checkpointing.py      atomic checkpoints that resume bit-exactly
# progress.py           the one live progress line
# logs.py               the JSONL log and the SVG curves drawn from it
# report.py             report.html and report.json in the run folder, rewritten at each evaluation

from minibert.train.evaluate import Evaluation, evaluate
from minibert.train.pretraining_config import RUN_PRESETS, PretrainingConfig, run_preset
from minibert.train.pretraining_loop import pretrain
from minibert.train.pretraining_run import PretrainingResult
from minibert.train.update import TrainingDiverged, train_step

__all__ = [
    "RUN_PRESETS", "Evaluation", "PretrainingConfig", "PretrainingResult", "TrainingDiverged", "evaluate", "pretrain",
    "run_preset", "train_step",
]
