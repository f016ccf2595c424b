"""How much of a test accuracy is the test set's luck: a bootstrap interval over the test examples.

The spread over seeds says how much another draw of training examples (and another initialisation) would
move a score; it says nothing about the test set, which is the same for every seed. A test set of a few
hundred examples moves a score by a point or two on its own. The bootstrap (Efron 1979) measures that:
draw the test examples again with replacement, many times, and read the scores' middle 95%. The arms of an
experiment score the same test examples, so a gain is bootstrapped paired: each resample draws the same
examples for both arms, and what the examples share (easy ones, hard ones) cancels.

Each run keeps which test examples it got right, packed as bits into a hex string (`pack_correct`).
"""

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95
BOOTSTRAP_SEED = 0  # the same resamples for every arm and every reader: the interval is a fixed function of the runs


def pack_correct(correct):
    """A (N,) array of booleans, one per test example, as a hex string (8 examples a byte)."""
    return np.packbits(np.asarray(correct, dtype=bool)).tobytes().hex()


def unpack_correct(packed, count):
    """The (count,) booleans `pack_correct` packed."""
    return np.unpackbits(np.frombuffer(bytes.fromhex(packed), dtype=np.uint8))[:count].astype(bool)


def bootstrap_interval(correct, baseline=None, resamples=RESAMPLES, level=LEVEL):
    """(low, high), in points: the interval of the mean accuracy over seeds of `correct` ((seeds, N)
    booleans), or, given `baseline` ((seeds', N) on the same N test examples), of its gain over it."""
    # The mean over seeds and examples is the mean over examples of each example's share of seeds right.
    per_example = np.asarray(correct, dtype=np.float64).mean(axis=0)  # (N,)
    if baseline is not None:
        per_example = per_example - np.asarray(baseline, dtype=np.float64).mean(axis=0)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws = rng.integers(0, len(per_example), size=(resamples, len(per_example)))  # (R, N): each resample's examples
    scores = per_example[draws].mean(axis=1)  # (R,)
    low, high = np.quantile(scores, [(1 - level) / 2, (1 + level) / 2])
    return 100 * float(low), 100 * float(high)
