"""Exercise truncate_seq_pair (lesson 09): `truncate_seq_pair` in minibert/data/instances.py.

Google's rule: while A and B together are longer than max_num_tokens, take one token from the longer side
(from B when they are equally long). Each token id encodes its side and position, so the tests see what was
kept.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minibert.data import Sentence
from minibert.data.instances import truncate_seq_pair


def side(length, offset):
    return Sentence(np.arange(offset, offset + length, dtype=np.int32), np.ones(length, bool))


def lengths_after(length_a, length_b, max_num_tokens, seed=0):
    a, b = truncate_seq_pair(side(length_a, 0), side(length_b, 1000), max_num_tokens, np.random.default_rng(seed))
    return len(a.ids), len(b.ids)


@given(length_a=st.integers(1, 60), length_b=st.integers(1, 60), max_num_tokens=st.integers(2, 80))
def test_the_pair_fits_the_budget_of_both_sides(length_a, length_b, max_num_tokens):
    """A and B together fit max_num_tokens, and a pair that fits already is left whole."""
    kept_a, kept_b = lengths_after(length_a, length_b, max_num_tokens)
    assert kept_a + kept_b == min(length_a + length_b, max(max_num_tokens, 0))


def test_the_longer_side_is_trimmed_first():
    """A of 30 and B of 10 into 32 tokens: A alone loses 8. A of 10 and B of 30: B alone loses 8."""
    assert lengths_after(30, 10, 32) == (22, 10)
    assert lengths_after(10, 30, 32) == (10, 22)


def test_equal_sides_end_equal_or_b_one_shorter():
    """Trimming alternates once the sides are equal, B first on a tie: 20 and 20 into 25 leaves 13 and 12;
    from 25 and 21 into 30, A first comes down to 21, then B: 15 and 15."""
    assert lengths_after(20, 20, 25) == (13, 12)
    assert lengths_after(25, 21, 30) == (15, 15)


def test_kept_tokens_are_a_run_of_each_side():
    """What is kept of each side is consecutive tokens of it (trimmed from the front, the back, or both)."""
    for seed in range(20):
        a, b = truncate_seq_pair(side(30, 0), side(30, 1000), 20, np.random.default_rng(seed))
        for kept in (a.ids, b.ids):
            assert np.array_equal(np.diff(kept), np.ones(len(kept) - 1, dtype=kept.dtype))
