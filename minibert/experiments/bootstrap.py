"""How much of a test accuracy is the test set's luck: a bootstrap interval over the test set's documents.

The spread over seeds says how much another draw of training examples (and another initialisation) would
move a score; it says nothing about the test set, which is the same for every seed. The bootstrap (Efron
1979) measures that: draw the test set again with replacement, many times, and read the scores' middle 95%.

What is drawn again must be what was drawn independently in the first place. The ladder's test sets are
whole documents held out (a module's or a class's docstrings), and the sentences of one document share its
words and its subject: a model that reads one of them well reads its neighbours well. Resampling sentences
as if independent counts each document's luck many times over and makes the interval too narrow
(docs/experiments.md, the ladder, says by how much). So the documents are resampled (a cluster bootstrap;
Davison & Hinkley 1997, section 3.8), and each example goes with its document.

A pair of sentences (doc-pairs) may come from two documents. A pair inside one document goes with it; a
pair across two goes with both, counted once for each copy of either (the vertex bootstrap of network data,
Snijders & Borgatti 1999). Each document's count is a Poisson(1) draw, independent of the others' (Owen &
Eckles 2012), so that every example, whether it has one document or two, is counted once on average.

The arms of an experiment score the same test examples, so a gain is bootstrapped paired: each resample
weighs the same documents for both arms, and what the examples share (easy ones, hard ones) cancels.

Each run keeps which test examples it got right, packed as bits into a hex string (`pack_correct`); each
task's splits keep the test examples' documents, as a line of numbers (`pack_documents`).
"""

import numpy as np

from minibert.errors import DataError

RESAMPLES = 2000
LEVEL = 0.95
BOOTSTRAP_SEED = 0  # the same resamples for every arm and every reader: the interval is a fixed function of the runs


def pack_correct(correct):
    """A (N,) array of booleans, one per test example, as a hex string (8 examples a byte)."""
    return np.packbits(np.asarray(correct, dtype=bool)).tobytes().hex()


def unpack_correct(packed, count):
    """The (count,) booleans `pack_correct` packed."""
    return np.unpackbits(np.frombuffer(bytes.fromhex(packed), dtype=np.uint8))[:count].astype(bool)


def pack_documents(documents):
    """Each test example's document ([d] for a sentence, [d1, d2] for a pair) as one line of text: `3 3 7`,
    or for pairs `3,3 3,8 7,7`."""
    return " ".join(",".join(str(number) for number in example) for example in documents)


def unpack_documents(packed):
    """The (N, 1) or (N, 2) array of document numbers `pack_documents` packed."""
    return np.array([[int(number) for number in example.split(",")] for example in packed.split()])


def example_weights(documents, resamples, rng):
    """(resamples, N): how many times each resample counts each example. `documents`: (N,) or (N, 1) document
    numbers, or (N, 2) for pairs, the documents of the first and the second sentence."""
    documents = np.asarray(documents).reshape(len(documents), -1)  # (N, 1) or (N, 2)
    counts = rng.poisson(1.0, size=(resamples, documents.max() + 1)).astype(np.float64)  # (R, D)
    first = documents[:, 0]
    weights = counts[:, first]  # (R, N)
    if documents.shape[1] == 2:
        second = documents[:, 1]
        # a pair across two documents is there once for each copy of both; a pair inside one, once per copy
        weights = weights * np.where(first == second, 1.0, counts[:, second])
    return weights


def bootstrap_interval(correct, baseline=None, documents=None, resamples=RESAMPLES, level=LEVEL):
    """(low, high), in points: the interval of the mean accuracy over seeds of `correct` ((seeds, N)
    booleans), or, given `baseline` ((seeds', N) on the same N test examples), of its gain over it.
    documents: each example's document ((N,), or (N, 2) for pairs); None: every example its own."""
    # The mean over seeds and examples is the mean over examples of each example's share of seeds right.
    per_example = np.asarray(correct, dtype=np.float64).mean(axis=0)  # (N,)
    if baseline is not None:
        per_example = per_example - np.asarray(baseline, dtype=np.float64).mean(axis=0)
    documents = np.arange(len(per_example)) if documents is None else np.asarray(documents)
    if len(documents) != len(per_example):  # a record's documents of another test split than its runs'
        raise DataError(f"{len(documents)} test documents given for {len(per_example)} test examples: each "
                        "example needs its own entry (its task's splits.json, test_documents)")
    weights = example_weights(documents, resamples, np.random.default_rng(BOOTSTRAP_SEED))  # (R, N)
    total = weights.sum(axis=1)  # (R,)
    drawn = total > 0  # a resample that drew no example at all (a chance of e^-D with D documents) says nothing
    scores = weights[drawn] @ per_example / total[drawn]  # (R,): each resample's weighted mean
    low, high = np.quantile(scores, [(1 - level) / 2, (1 + level) / 2])
    return 100 * float(low), 100 * float(high)
