"""Exercise nsp_random_document (lesson 09): `random_other_document_start` in minibert/data/instances.py.

A NotNext B is cut from a document drawn at random among the others (Google retries up to 10 times to miss
A's own), from a sentence drawn at random in it. Every token id encodes its document and sentence, so the
tests can see where each B was cut from, over many draws.
"""

import numpy as np

from minibert.data import Sentence
from minibert.data.instances import random_other_document_start

DOCUMENTS, SENTENCES = 6, 8


def corpus():
    """Document d, sentence s holds the one token 100·d + s."""
    return [[Sentence(np.array([100 * d + s], np.int32), np.ones(1, bool)) for s in range(SENTENCES)]
            for d in range(DOCUMENTS)]


def draws(document_index, count=600, target_length=1):
    """(document, first sentence) of `count` Bs, each from its own seed."""
    documents = corpus()
    for seed in range(count):
        side = random_other_document_start(documents, document_index, np.random.default_rng(seed), target_length)
        yield int(side.ids[0]) // 100, int(side.ids[0]) % 100


def test_b_never_comes_from_a_s_document():
    """With six documents, 600 draws for A in document 2: not one B from document 2."""
    assert all(document != 2 for document, _ in draws(2))


def test_every_other_document_is_drawn_about_equally():
    """The other five documents each give about a fifth of the Bs (within 5 standard deviations of 120 of
    600): the document is drawn at random, not taken from a counter."""
    counts = np.bincount([document for document, _ in draws(0)], minlength=DOCUMENTS)
    assert counts[0] == 0
    expected, sigma = 600 / 5, np.sqrt(600 * 0.2 * 0.8)
    assert np.all(np.abs(counts[1:] - expected) <= 5 * sigma), counts


def test_b_starts_at_a_random_sentence():
    """The first sentence of B is spread over all eight sentences of its document, not always the first."""
    starts = np.bincount([start for _, start in draws(3)], minlength=SENTENCES)
    assert np.all(starts > 600 / SENTENCES / 3), starts


def test_b_takes_sentences_until_the_target_length():
    """With a target of 3 tokens (one per sentence here), B holds 3 consecutive sentences of one document
    unless its start leaves fewer."""
    documents = corpus()
    for seed in range(100):
        side = random_other_document_start(documents, 1, np.random.default_rng(seed), target_length=3)
        sentences = side.ids % 100
        assert len(set(side.ids // 100)) == 1
        assert np.array_equal(sentences, np.arange(sentences[0], sentences[0] + len(sentences)))
        assert len(sentences) == min(3, SENTENCES - sentences[0])
