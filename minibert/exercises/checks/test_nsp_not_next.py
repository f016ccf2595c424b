"""Exercise nsp_not_next (lesson 09): the NotNext branch of `create_instances_from_document`
(minibert/data/instances.py).

Every token id below encodes where it came from: id = 1000·(document + 1) + 10·sentence + k. So a test can
tell which document and sentence each side of an instance was cut from.
"""

import math

import numpy as np

from minibert.data import InstanceConfig, Sentence, SpecialTokens, create_instances_from_document

SPECIAL = SpecialTokens(vocab_size=10000, cls_id=1, sep_id=2, pad_id=0, mask_id=3, special_ids=[0, 1, 2, 3])
CONFIG = InstanceConfig(max_seq_length=16, short_seq_prob=0.0)  # 13 tokens for A and B together


def corpus(documents=6, sentences=8, length=3):
    return [[Sentence(np.array([1000 * (d + 1) + 10 * s + k for k in range(length)], np.int32),
                      np.ones(length, bool)) for s in range(sentences)] for d in range(documents)]


def sides(instance):
    ids, segments = instance.input_ids, instance.segment_ids
    return ids[1:np.flatnonzero(ids == SPECIAL.sep_id)[0]], ids[(segments == 1) & (ids != SPECIAL.sep_id)]


def instances(seeds=300, document=0):
    documents = corpus()
    for seed in range(seeds):
        yield from create_instances_from_document(documents, document, np.random.default_rng(seed), SPECIAL,
                                                  CONFIG)


def test_not_next_b_comes_from_another_document():
    """Label 1 (NotNext): every token of B belongs to a document other than A's; label 0: to A's."""
    labels = set()
    for instance in instances(seeds=100):
        side_a, side_b = sides(instance)
        assert len(side_a) and len(side_b)
        assert set(side_a // 1000) == {1}
        labels.add(instance.next_sentence_label)
        if instance.next_sentence_label == 1:
            assert not np.any(side_b // 1000 == 1)
        else:
            assert set(side_b // 1000) == {1}
    assert labels == {0, 1}


def test_labels_are_balanced():
    """NotNext is chosen with probability 1/2 (always for a one-sentence chunk, rare here): within 5 sigma."""
    labels = [instance.next_sentence_label for instance in instances()]
    n = len(labels)
    assert abs(sum(labels) - n / 2) <= 5 * math.sqrt(n / 4) + 0.05 * n


def test_unused_sentences_are_put_back():
    """After a NotNext instance, the chunk's sentences after A are not lost: over a pass of the document,
    every one of its 8 sentences shows up in some A, or in the B of an IsNext instance."""
    documents = corpus()
    for seed in range(40):
        seen = set()
        for instance in create_instances_from_document(documents, 0, np.random.default_rng(seed), SPECIAL,
                                                       CONFIG):
            side_a, side_b = sides(instance)
            seen.update((side_a % 1000 // 10).tolist())
            if instance.next_sentence_label == 0:
                seen.update((side_b % 1000 // 10).tolist())
        assert seen == set(range(8)), f"seed {seed}: sentences {sorted(set(range(8)) - seen)} were dropped"
