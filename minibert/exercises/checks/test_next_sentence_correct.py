"""Exercise next_sentence_correct (lesson 12): `next_sentence_correct` in minibert/train/metrics.py.

(correct, total) of the NSP guesses: a guess is the logits' argmax, 0 IsNext and 1 NotNext; every pair
counts. The labels may come as Google's (B, 1) column.
"""

import numpy as np

from minibert.train.metrics import next_sentence_correct


def test_counts_by_hand():
    """Logits for 3 pairs guessing IsNext, NotNext, NotNext against labels IsNext, IsNext, NotNext: 2 of 3,
    with the labels as a vector or as a (B, 1) column."""
    logits = np.array([[2.0, -1.0], [0.1, 0.3], [-4.0, -3.5]])
    for labels in (np.array([0, 0, 1]), np.array([[0], [0], [1]])):
        assert next_sentence_correct(logits, labels) == (2, 3), f"labels of shape {labels.shape}"


def test_all_right_and_all_wrong():
    """Labels equal to the guesses: (4, 4); their opposites: (0, 4)."""
    logits = np.random.default_rng(0).standard_normal((4, 2))
    guesses = np.argmax(logits, -1)
    assert next_sentence_correct(logits, guesses) == (4, 4)
    assert next_sentence_correct(logits, 1 - guesses) == (0, 4)
