"""The capstone's end-to-end tests, copied into the workspace's tests folder as test_capstone.py (see capstone.py).

Each body's own check (tests/test_<id>.py) names the body that is wrong; these say whether the whole BERT
and its loop, assembled from the student's bodies, do what BERT does.
"""

import os
from pathlib import Path

import pytest

from minibert.exercises import capstone

HERE = Path(__file__).resolve().parent


def test_outputs_loss_and_gradients_equal_huggingface():
    """HF's BertForPreTraining's stored outputs, loss and every gradient on its golden batch, in float64."""
    capstone.golden_outputs(HERE / "golden")


def test_the_whole_loss_passes_finite_differences():
    """MLM + NSP loss in training mode, dropout on, against central differences for every parameter."""
    capstone.whole_loss_gradcheck()


def test_three_updates_lower_the_loss():
    """backward, clipping, AdamW and the schedule: the loss falls and each weight moves by about lr."""
    capstone.update_steps()


@pytest.mark.skipif(os.environ.get("MINIBERT_CAPSTONE_QUICK") == "1", reason="MINIBERT_CAPSTONE_QUICK=1")
def test_the_loop_trains_tiny_on_synthetic(tmp_path):
    """Your loop trains `tiny` on `synthetic`: after capstone.TRAIN_STEPS steps the held-out masked-LM
    accuracy is at least capstone.MIN_HELD_OUT_MLM_ACCURACY."""
    accuracy = capstone.train_tiny(tmp_path / "run", HERE.parent / "data")
    assert accuracy >= capstone.MIN_HELD_OUT_MLM_ACCURACY, (
        f"held-out MLM accuracy {accuracy:.1%} after {capstone.TRAIN_STEPS} steps; the reference bodies reach "
        f"at least {capstone.MIN_HELD_OUT_MLM_ACCURACY:.0%}")
