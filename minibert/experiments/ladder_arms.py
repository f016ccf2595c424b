"""The ladder's names: its rungs (the models it compares), the ways it measures each, and an arm's name.

An arm is one rung, task, way and size, named `rung-task-way-size` (`15min-doc-pairs-probe-100`): the name
its runs are stored under in results.json, which ladder.py runs and ladder_table.py and ladder_figure.py read.
"""

RUNGS = {
    "random": "random weights",
    "15min": "15 minutes of pretraining",
    "60min": "60 minutes of pretraining",
    "60min_large": "60 minutes on pydocs-large",
    "minilm": "all-MiniLM-L6-v2",
    # the sentence-task experiment's (sentence_task.py): the 15 minutes' steps with another sentence loss
    "15min_sop": "15 minutes, SOP for NSP",
    "15min_none": "15 minutes, no sentence loss",
}
WAYS = {"finetune": "fine-tuned", "probe": "linear probe", "lpft": "probe, then fine-tuned"}


def arm_name(rung, task, way, size):
    return f"{rung}-{task}-{way}-{size}"


def parse_arm(arm):
    """(rung, task, way, size) of an arm name; task names hold dashes, the other three do not (a rung's
    name joins its words with _)."""
    rung, rest = arm.split("-", 1)
    task, way, size = rest.rsplit("-", 2)
    return rung, task, way, size
