"""The sinusoidal start of the learned position table (minibert/model/position_init.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.model.position_init import sinusoidal_positions
from minibert.train.pretraining_config import run_preset
from minibert.train.pretraining_setup import build_model


@settings(derandomize=True, max_examples=20, deadline=None)
@given(positions=st.integers(8, 80), half=st.integers(1, 24), offset=st.integers(1, 5))
def test_each_sine_cosine_pair_moves_by_one_rotation_per_offset(positions, half, offset):
    """PE(p + k) is a fixed linear map of PE(p) (Vaswani et al. §3.5): for every sin/cos pair the step from p
    to p + k is the same rotation whatever p, which is what lets one projection find "k tokens away"."""
    table = sinusoidal_positions(positions, 2 * half, std=0.02).astype(np.float64)
    pairs = table.reshape(positions, half, 2)  # (N, H/2, [sin, cos])
    angle_now = np.arctan2(pairs[:-offset, :, 0], pairs[:-offset, :, 1])
    angle_later = np.arctan2(pairs[offset:, :, 0], pairs[offset:, :, 1])
    step = np.angle(np.exp(1j * (angle_later - angle_now)))  # wrapped to (-pi, pi]
    np.testing.assert_allclose(step, np.broadcast_to(step[:1], step.shape), atol=1e-4)
    np.testing.assert_allclose(np.hypot(pairs[..., 0], pairs[..., 1]), pairs[0, 0, 1], rtol=1e-5)


def test_the_table_has_the_spread_of_bert_initialiser():
    table = sinusoidal_positions(512, 256, std=0.02)
    assert table.shape == (512, 256) and table.dtype == np.float32
    assert table.std() == pytest.approx(0.02, rel=1e-3)
    assert len({row.tobytes() for row in table}) == 512  # every position its own vector


def test_a_run_starts_its_positions_as_it_says():
    sinusoidal = build_model(run_preset("tiny", position_init="sinusoidal"), vocab_size=64)
    normal = build_model(run_preset("tiny"), vocab_size=64)
    table = sinusoidal.bert.embeddings.position_embeddings.weight.data
    np.testing.assert_array_equal(table, sinusoidal_positions(*table.shape, 0.02))
    assert not np.allclose(normal.bert.embeddings.position_embeddings.weight.data, table)
