"""How much of one training step a student writes: the share of its lines that lie inside exercise bodies.

One plain pretraining step (`train_step` on a 2-layer model on the NumPy references: forward, MLM + NSP loss,
backward, clipping, AdamW, the schedule) runs under a line tracer. Of the distinct lines of minibert it executes, at
least half must lie between `# BEGIN EXERCISE` and `# END EXERCISE` markers; the rest are checks and
plumbing. The figure is printed (`pytest -s`) so that the share the closing notes and docs quote can be checked.
"""

import sys
from collections import Counter
from functools import partial
from pathlib import Path

import numpy as np

from minibert import use_backend
from minibert.config import BertConfig
from minibert.exercises import catalog, workspace
from minibert.model import BertForPreTraining
from minibert.optim import LRScheduler, bert_optimizer, linear_warmup_linear_decay
from minibert.train import run_preset, train_step

PACKAGE = workspace.PACKAGE_DIR
MINIMUM_SHARE = 0.5


def exercise_lines():
    """{absolute file path: set of 1-based line numbers inside an exercise body}."""
    lines = {}
    for exercise in workspace.scan_package().values():
        path = str(PACKAGE.parent / exercise.path)
        lines.setdefault(path, set()).update(range(exercise.begin + 2, exercise.end + 1))
    return lines


def executed_lines(run):
    """The distinct (file, line) pairs of minibert that `run()` executes."""
    seen = set()
    package = str(PACKAGE)

    def tracer(frame, event, _):
        if not frame.f_code.co_filename.startswith(package):
            return None  # do not trace inside NumPy, the standard library or the test itself
        if event == "line":
            seen.add((frame.f_code.co_filename, frame.f_lineno))
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return seen


def plain_step():
    """A 2-layer model, its AdamW and schedule, a batch in Google's format; returns the step, `train_step`
    (the one the pretraining loop takes), as a function of no arguments."""
    config = BertConfig.preset("tiny", num_hidden_layers=2)
    model = BertForPreTraining(config, seed=0)
    optimizer = bert_optimizer(model.named_parameters(), lr=1e-3, rule="adamw")
    scheduler = LRScheduler(optimizer, partial(linear_warmup_linear_decay, total_steps=10, warmup_steps=2))
    rng = np.random.default_rng(0)
    ids = rng.integers(5, config.vocab_size, size=(4, 16))
    batch = {"input_ids": ids, "segment_ids": (np.arange(16) >= 8).astype(np.int64) * np.ones_like(ids),
             "input_mask": np.ones_like(ids), "masked_lm_positions": rng.integers(1, 16, size=(4, 3)),
             "masked_lm_ids": rng.integers(5, config.vocab_size, size=(4, 3)),
             "masked_lm_weights": np.ones((4, 3)), "next_sentence_labels": np.array([0, 1, 0, 1])}
    run_config = run_preset("tiny")
    return lambda: train_step(model, model.parameters(), optimizer, scheduler, batch, run_config)


def test_the_capstone_blanks_exactly_the_bodies_a_step_runs():
    """catalog.STEP, the capstone's exercises, are the exercises whose bodies one step executes."""
    with use_backend("numpy"):
        executed = executed_lines(plain_step())
    ran = {exercise.id for exercise in workspace.scan_package().values()
           if any((str(PACKAGE.parent / exercise.path), line) in executed
                  for line in range(exercise.begin + 2, exercise.end + 1))}
    assert sorted(ran) == sorted(catalog.STEP)


def test_most_of_a_step_is_exercise_bodies():
    """At least half of the distinct minibert lines one step executes are inside exercise bodies."""
    with use_backend("numpy"):
        step = plain_step()
        executed = executed_lines(step)
    marked = exercise_lines()
    inside = {(path, line) for path, line in executed if line in marked.get(path, ())}
    share = len(inside) / len(executed)
    print(f"\none step executes {len(executed)} distinct lines of minibert; {len(inside)} "
          f"({share:.0%}) lie inside exercise bodies")
    by_file = Counter(Path(path).relative_to(PACKAGE.parent).as_posix() for path, _ in executed - inside)
    assert share >= MINIMUM_SHARE, f"{share:.0%} < {MINIMUM_SHARE:.0%}; lines outside, by file: {by_file.most_common()}"
