"""The mimetic start of the query and key projections (minibert/model/attention_init.py)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.model.attention_init import mimetic_query_key
from minibert.train.pretraining_config import run_preset
from minibert.train.pretraining_setup import build_model


def head_scores(query, key, inputs, head, head_size):
    """(N, N) scores q_i . k_j / sqrt(d) of one head for the rows of `inputs` (N, H)."""
    rows = slice(head * head_size, (head + 1) * head_size)
    return (inputs @ query[rows].T) @ (inputs @ key[rows].T).T / np.sqrt(head_size)


@settings(derandomize=True, max_examples=15, deadline=None)
@given(heads=st.sampled_from([1, 2, 4]), head_size=st.sampled_from([16, 32, 64]), seed=st.integers(0, 100))
def test_every_head_starts_by_scoring_a_token_highest_against_itself(heads, head_size, seed):
    """For inputs of LayerNorm's spread, each head scores nearly every token highest against itself: the
    noisy identity W_Q^h (W_K^h)^T (noisy, so not always). BERT's independent start has no such preference."""
    hidden = heads * head_size
    inputs = np.random.default_rng(seed + 1000).normal(size=(12, hidden))
    query, key = mimetic_query_key(hidden, heads, np.random.default_rng(seed))
    assert query.shape == key.shape == (hidden, hidden) and query.dtype == np.float32
    for head in range(heads):
        scores = head_scores(query, key, inputs, head, head_size)
        assert np.sum(scores.argmax(axis=1) == np.arange(12)) >= 10
    normal = np.random.default_rng(seed).normal(0, 0.02, (2, hidden, hidden))
    scores = head_scores(normal[0], normal[1], inputs, 0, head_size)
    assert abs(scores.diagonal().mean()) < 0.1 * abs(head_scores(query, key, inputs, 0, head_size).diagonal().mean())


def test_each_head_keeps_the_strongest_directions_of_its_noisy_identity():
    """W_Q^h (W_K^h)^T is the best rank-d approximation of alpha Z + beta I: by Eckart-Young its distance to
    the full matrix is exactly the weight of the singular values it leaves out. The test draws the same Z
    (one (H, H) draw a head, in order, from the same generator)."""
    hidden, heads = 32, 4
    head_size = hidden // heads
    query, key = mimetic_query_key(hidden, heads, np.random.default_rng(3), alpha=0.5, beta=1.0)
    rng = np.random.default_rng(3)
    for head in range(heads):
        full = 0.5 * rng.normal(0, 1 / np.sqrt(hidden), (hidden, hidden)) + np.eye(hidden)
        rows = slice(head * head_size, (head + 1) * head_size)
        product = query[rows].T.astype(np.float64) @ key[rows].astype(np.float64)  # (H, d) @ (d, H)
        left_out = np.linalg.svd(full, compute_uv=False)[head_size:]
        np.testing.assert_allclose(np.linalg.norm(full - product), np.sqrt(np.sum(left_out ** 2)), rtol=1e-4)
        assert np.linalg.matrix_rank(product, tol=1e-4) == head_size


def test_a_run_changes_only_the_query_and_key_weights():
    """attention_init="mimetic" keeps BERT's model: the same parameters, and every one but W_Q and W_K of
    each layer exactly as the normal start draws it from the same seed."""
    mimetic = dict(build_model(run_preset("tiny", attention_init="mimetic"), vocab_size=64).named_parameters())
    normal = dict(build_model(run_preset("tiny"), vocab_size=64).named_parameters())
    assert mimetic.keys() == normal.keys()
    changed = {name for name in normal if not np.array_equal(normal[name].data, mimetic[name].data)}
    expected = {name for name in normal if name.endswith(("self.query.weight", "self.key.weight"))}
    assert changed == expected and expected
