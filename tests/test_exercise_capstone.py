"""The capstone: every body of one training step blanked at once, refereed end to end (capstone.py).

Its workspace fails unsolved and passes with the reference bodies put back (the fast parts; the training part
is timed and measured in docs/performance.md, "The capstone's check"). Each blanked body makes a named fast
part fail, naming the body: the forward and backward bodies HuggingFace's golden comparison, the optimizer's
the update steps.
Wrong bodies fail their own checks, which the capstone runs (test_exercise_mutants.py).
"""

import pytest
from exercise_mutants import Mutant
from test_exercise_mutants import MARKED, installed

from minibert import use_backend
from minibert.exercises import capstone, catalog, workspace

UPDATE_BODIES = {"global_grad_norm", "clip_grad_norm", "adam_moments", "bias_correction", "adamw_update",
                 "optimizer_step", "zero_grad", "warmup_decay", "scheduler_apply", "scheduler_step", "update_step",
                 "masked_lm_correct", "next_sentence_correct", "train_step", "dropout_forward", "dropout_backward"}


def blank(exercise_id):
    """The exercise's body replaced by the stub `start` writes, as a Mutant to install."""
    exercise = MARKED[exercise_id]
    stub = f"{exercise.indent}raise NotImplementedError('exercise {exercise_id}')\n"
    return Mutant(exercise_id, "blank", "", (("".join(exercise.body), stub),))


def test_the_reference_passes_the_fast_parts():
    """With the reference bodies, HF's outputs are matched, the whole loss passes finite differences, and
    three updates lower the loss."""
    with use_backend("numpy"):
        capstone.golden_outputs(workspace.GOLDEN_DIR / capstone.GOLDEN_FOLDER)
        capstone.whole_loss_gradcheck()
        capstone.update_steps()


@pytest.mark.parametrize("exercise_id", catalog.STEP)
def test_each_blanked_body_fails_a_named_part(exercise_id):
    """With one body blanked, the part that runs it fails with the body's name."""
    part = capstone.update_steps if exercise_id in UPDATE_BODIES else (
        lambda: capstone.golden_outputs(workspace.GOLDEN_DIR / capstone.GOLDEN_FOLDER))
    with use_backend("numpy"), installed(blank(exercise_id)), pytest.raises(NotImplementedError,
                                                                              match=f"exercise {exercise_id}$"):
        part()


def test_the_capstone_workspace_fails_unsolved_and_passes_solved(tmp_path, monkeypatch):
    """`start capstone` blanks every body of the step; `check capstone` fails each of them and the end-to-end
    tests; with the reference bodies back, all pass (the training part skipped here, as it takes minutes)."""
    monkeypatch.setenv("MINIBERT_CAPSTONE_QUICK", "1")
    directory = workspace.start("capstone", tmp_path / "capstone")
    assert (directory / "tests" / "golden" / "golden.npz").is_file()
    status, results = workspace.check("capstone", directory, capture=True)
    assert status == 1, results.get("_output")
    for exercise_id in catalog.STEP:
        assert results[exercise_id]["failed"] > 0, (exercise_id, results["_output"])
    assert results["capstone"]["failed"] == 3, results["_output"]
    workspace.restore_reference(directory)
    status, results = workspace.check("capstone", directory, capture=True)
    assert status == 0, results.get("_output")
    assert results["capstone"] == {"passed": 3, "failed": 0, "why": None}
