"""`sentence-task`: NSP, SOP or no sentence loss, at the 15-minute rung, on real sentence pairs.

`experiment nsp` asks the question inside the experiment, on models it pretrains for 800 steps. This asks it
of the 15-minute checkpoint a student has: the same recipe and number of steps pretrained three times, with
BERT's next-sentence prediction (the default run), with ALBERT's sentence order (`--sentence-task sop`) and
with no sentence loss (`--no-nsp`, RoBERTa), each measured as the ladder measures a rung (ladder.py: fine-
tuned with the finetune command's recipe, and as a linear probe) on `doc-pairs`, the pair task closest to
NSP's question: is sentence B one of the 3 after A in its document, or from another document of the
library? Random weights are the floor. 30 and 100 pairs a class; quick mode: the probe at 100.
"""

from minibert.experiments.ladder import METRICS, arms_for, check_and_pin, run, run_kind, settings_for
from minibert.experiments.ladder_figure import draw_ladder
from minibert.experiments.ladder_provenance import ladder_provenance
from minibert.experiments.runner import Experiment

SENTENCE_RUNGS = ["random", "15min", "15min_sop", "15min_none"]
MODES = {
    "quick": {"tasks": ["doc-pairs"], "validation_per_class": 100, "test_per_class": 300,
              "ways": {"probe": [{"rungs": SENTENCE_RUNGS, "sizes": ["100"]}]}},
    "full": {"tasks": ["doc-pairs"], "validation_per_class": 100, "test_per_class": 300,
             "ways": {way: [{"rungs": SENTENCE_RUNGS, "sizes": ["30", "100"]}] for way in ("finetune", "probe")}},
}

EXPERIMENT = Experiment(
    name="sentence-task",
    metrics=lambda mode: METRICS, arms=arms_for(MODES), settings=settings_for(MODES), run=run,
    note=("NSP is the 15-minute run's own loss; SOP and none are the same steps with another one. A sentence "
          "loss that teaches how sentences follow each other should lift doc-pairs above none."),
    figure=draw_ladder, seeds_inner=True, check=check_and_pin, provenance=ladder_provenance, run_kind=run_kind)
