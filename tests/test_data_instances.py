"""Instance creation (minibert/data/instances.py): Google's NSP pairs, ALBERT's SOP, RoBERTa's full sentences.

The test documents give every token a distinct id, so each token of an instance says exactly which document,
sentence and position it came from. Statistical bounds are 5 binomial standard deviations, on seeded,
derandomized data (deterministic; a correct implementation fails a check with probability about 6e-7).
"""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.data.instances import (
    IS_NEXT,
    NOT_NEXT,
    InstanceConfig,
    Sentence,
    create_instances_from_document,
    iter_instances,
    truncate_seq_pair,
)
from minibert.data.special_tokens import SpecialTokens

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL = SpecialTokens(vocab_size=100_000, cls_id=CLS, sep_id=SEP, pad_id=PAD, mask_id=MASK,
                        special_ids=[PAD, UNK, CLS, SEP, MASK])
FIRST_TEXT_ID = 5


def make_documents(sentence_lengths):
    """Documents (lists of `Sentence`) from [[len, len, ...], ...]; every token id is distinct."""
    documents, next_id = [], FIRST_TEXT_ID
    for lengths in sentence_lengths:
        document = []
        for length in lengths:
            ids = np.arange(next_id, next_id + length, dtype=np.int32)
            document.append(Sentence(ids, np.ones(length, bool)))
            next_id += length
        documents.append(document)
    return documents


def sides(instance):
    """(A ids, B ids) of `[CLS] A [SEP] B [SEP]`, checking the layout and segment ids on the way."""
    ids, segments = instance.input_ids, instance.segment_ids
    separators = np.flatnonzero(ids == SEP)
    assert ids[0] == CLS and len(separators) == 2 and separators[1] == len(ids) - 1
    assert np.all(segments[:separators[0] + 1] == 0) and np.all(segments[separators[0] + 1:] == 1)
    return ids[1:separators[0]], ids[separators[0] + 1:-1]


def locate(documents):
    """id -> (document, sentence) for the tokens of `documents`, and the sentence start ids."""
    where, starts = {}, set()
    for d, document in enumerate(documents):
        for s, sentence in enumerate(document):
            starts.add(int(sentence.ids[0]))
            for token in sentence.ids:
                where[int(token)] = (d, s)
    return where, starts


def is_run(ids):
    """True if the ids are consecutive integers: one contiguous stretch of the corpus."""
    return len(ids) > 0 and np.all(np.diff(ids) == 1)


document_shapes = st.lists(st.lists(st.integers(1, 5), min_size=1, max_size=6), min_size=2, max_size=6)


@settings(derandomize=True, max_examples=40)
@given(shapes=document_shapes, seed=st.integers(0, 2**32 - 1))
def test_nsp_pairs_follow_googles_rules(shapes, seed):
    """Documents no longer than one sequence (33 = 3 + 6 sentences * 5 tokens), short_seq_prob 0:
    - A is whole sentences of the document, starting at a sentence start;
    - IsNext: B is the rest of the document, right after A (so B really continues A);
    - NotNext: B is a stretch of ANOTHER document, starting at a sentence start;
    - the put-back: the document's own tokens (A, and B when IsNext) tile the document exactly, in order."""
    documents = make_documents(shapes)
    where, starts = locate(documents)
    config = InstanceConfig(max_seq_length=33, short_seq_prob=0.0)
    rng = np.random.default_rng(seed)
    for d, document in enumerate(documents):
        own = []
        for instance in create_instances_from_document(documents, d, rng, SPECIAL, config):
            side_a, side_b = sides(instance)
            assert is_run(side_a) and int(side_a[0]) in starts and {where[int(t)][0] for t in side_a} == {d}
            own.append(side_a)
            if instance.next_sentence_label == IS_NEXT:
                assert side_b[0] == side_a[-1] + 1 and is_run(side_b)
                assert side_b[-1] == document[-1].ids[-1]
                own.append(side_b)
            else:
                assert instance.next_sentence_label == NOT_NEXT
                assert is_run(side_b) and int(side_b[0]) in starts and where[int(side_b[0])][0] != d
        np.testing.assert_array_equal(np.concatenate(own), np.concatenate([s.ids for s in document]))


@settings(derandomize=True, max_examples=30)
@given(shapes=st.lists(st.lists(st.integers(1, 40), min_size=1, max_size=8), min_size=2, max_size=5),
       max_seq_length=st.integers(5, 64), short_seq_prob=st.sampled_from([0.0, 0.1, 1.0]),
       task=st.sampled_from(["nsp", "sop", "none"]), seed=st.integers(0, 2**32 - 1))
def test_no_instance_exceeds_max_seq_length(shapes, max_seq_length, short_seq_prob, task, seed):
    """Whatever the sentence lengths (up to 40 tokens, longer than some sequences): every instance fits
    max_seq_length, starts with [CLS], ends with [SEP], has segment ids 0/1 only, and every id is a text id
    of the corpus or [CLS]/[SEP]."""
    documents = make_documents(shapes)
    corpus_ids = np.concatenate([s.ids for document in documents for s in document])
    config = InstanceConfig(max_seq_length, short_seq_prob, task)
    rng = np.random.default_rng(seed)
    for instance in iter_instances(documents, rng.permutation(len(documents)), rng, SPECIAL, config):
        assert len(instance.input_ids) <= max_seq_length
        assert instance.input_ids[0] == CLS and instance.input_ids[-1] == SEP
        assert set(np.unique(instance.segment_ids)) <= {0, 1}
        assert np.isin(instance.input_ids, np.concatenate([corpus_ids, [CLS, SEP]])).all()
        assert len(instance.input_ids) == len(instance.segment_ids) == len(instance.word_starts)


def test_nsp_labels_are_balanced():
    """Over ~2,400 instances from chunks of 2+ sentences, NotNext is 50% within 5 sigma. Chunks of one
    sentence (here only a document's last sentence, as sentences are shorter than the target) are always
    NotNext, as in Google's code, and are counted apart."""
    rng = np.random.default_rng(2024)
    documents = make_documents([[4] * int(rng.integers(2, 30)) for _ in range(500)])
    config = InstanceConfig(max_seq_length=19, short_seq_prob=0.0)
    last_sentence_starts = {int(document[-1].ids[0]) for document in documents}
    labels, forced = [], []
    for instance in iter_instances(documents, range(len(documents)), rng, SPECIAL, config):
        side_a, _ = sides(instance)
        if len(side_a) == 4 and int(side_a[0]) in last_sentence_starts:
            forced.append(instance.next_sentence_label)
        else:
            labels.append(instance.next_sentence_label)
    share = np.mean(labels)
    assert len(labels) > 2000
    assert abs(share - 0.5) <= 5 * math.sqrt(0.25 / len(labels))
    assert forced and all(label == NOT_NEXT for label in forced)


def expected_truncated_lengths(length_a, length_b, max_num_tokens):
    """Derived by hand from 'trim the longer side (B on a tie) one token at a time': if the longer side can
    absorb all the excess, only it shrinks; otherwise both end at half, A keeping the odd token."""
    excess = length_a + length_b - max_num_tokens
    if excess <= 0:
        return length_a, length_b
    if abs(length_a - length_b) >= excess:
        return (length_a - excess, length_b) if length_a > length_b else (length_a, length_b - excess)
    return (max_num_tokens + 1) // 2, max_num_tokens // 2


@settings(derandomize=True, max_examples=50)
@given(length_a=st.integers(1, 60), length_b=st.integers(1, 60), max_num_tokens=st.integers(2, 80),
       seed=st.integers(0, 2**32 - 1))
def test_truncate_seq_pair_trims_the_longer_side(length_a, length_b, max_num_tokens, seed):
    """Final lengths follow the rule; each side keeps one contiguous stretch of itself; a trimmed side starts
    a new word."""
    side_a = Sentence(np.arange(length_a, dtype=np.int32), np.zeros(length_a, bool))
    side_b = Sentence(np.arange(100, 100 + length_b, dtype=np.int32), np.zeros(length_b, bool))
    new_a, new_b = truncate_seq_pair(side_a, side_b, max_num_tokens, np.random.default_rng(seed))
    assert (len(new_a.ids), len(new_b.ids)) == expected_truncated_lengths(length_a, length_b, max_num_tokens)
    for new, old in ((new_a, side_a), (new_b, side_b)):
        assert is_run(new.ids) and set(new.ids) <= set(old.ids)
        assert new.word_starts[0]


def test_truncation_trims_front_and_back_at_random():
    """Cutting 40 tokens off A, 1000 times: tokens cut from the front average 20, within 5 sigma of the mean
    of Binomial(40, 1/2) (sigma of one draw sqrt(10), of the mean sqrt(10/1000))."""
    rng = np.random.default_rng(5)
    side_a = Sentence(np.arange(50, dtype=np.int32), np.ones(50, bool))
    side_b = Sentence(np.arange(100, 105, dtype=np.int32), np.ones(5, bool))
    front_cuts = [int(truncate_seq_pair(side_a, side_b, 15, rng)[0].ids[0]) for _ in range(1000)]
    assert abs(np.mean(front_cuts) - 20) <= 5 * math.sqrt(10 / 1000)


@settings(derandomize=True, max_examples=30)
@given(shapes=document_shapes, seed=st.integers(0, 2**32 - 1))
def test_sop_swaps_true_continuations(shapes, seed):
    """SOP: A and B always come from one document, adjacent; label 0 when A comes first, 1 when B does."""
    documents = make_documents(shapes)
    where, _ = locate(documents)
    config = InstanceConfig(max_seq_length=33, short_seq_prob=0.0, sentence_task="sop")
    rng = np.random.default_rng(seed)
    for instance in iter_instances(documents, range(len(documents)), rng, SPECIAL, config):
        side_a, side_b = sides(instance)
        assert where[int(side_a[0])][0] == where[int(side_b[0])][0]
        first, second = (side_a, side_b) if instance.next_sentence_label == 0 else (side_b, side_a)
        assert is_run(np.concatenate([first, second]))


def test_sop_labels_are_balanced():
    """Over ~2,000 SOP instances, 'swapped' is 50% within 5 sigma (no forced label in SOP)."""
    rng = np.random.default_rng(11)
    documents = make_documents([[4] * int(rng.integers(1, 30)) for _ in range(500)])
    config = InstanceConfig(max_seq_length=19, short_seq_prob=0.0, sentence_task="sop")
    labels = [i.next_sentence_label for i in iter_instances(documents, range(500), rng, SPECIAL, config)]
    assert len(labels) > 1800
    assert abs(np.mean(labels) - 0.5) <= 5 * math.sqrt(0.25 / len(labels))


@settings(derandomize=True, max_examples=30)
@given(shapes=st.lists(st.lists(st.integers(1, 12), min_size=1, max_size=6), min_size=1, max_size=6),
       max_seq_length=st.integers(6, 40))
def test_full_sentences_pack_the_corpus_in_order(shapes, max_seq_length):
    """RoBERTa's FULL-SENTENCES: instances hold the corpus in order, each `[CLS] ... [SEP]` with a [SEP]
    between documents, no sentence split across instances (except one longer than an instance, cut at its
    end), segment ids 0 and label 0."""
    documents = make_documents(shapes)
    where, _ = locate(documents)
    config = InstanceConfig(max_seq_length, sentence_task="none")
    rng = np.random.default_rng(0)
    instances = list(iter_instances(documents, range(len(documents)), rng, SPECIAL, config))
    bodies = []
    for instance in instances:
        assert instance.input_ids[0] == CLS and instance.input_ids[-1] == SEP
        assert len(instance.input_ids) <= max_seq_length and not instance.segment_ids.any()
        assert instance.next_sentence_label == 0
        body = instance.input_ids[1:-1]
        assert body[0] != SEP and body[-1] != SEP
        text = body[body != SEP]
        documents_of_text = [where[int(token)][0] for token in text]
        document_changes = np.count_nonzero(np.diff(documents_of_text))
        assert np.count_nonzero(body == SEP) == document_changes
        bodies.append(text)
    kept = [s.ids[:max_seq_length - 2] for document in documents for s in document]
    np.testing.assert_array_equal(np.concatenate(bodies), np.concatenate(kept))
    starts = {int(ids[0]) for ids in kept}
    assert all(int(body[0]) in starts for body in bodies)


def test_same_seed_gives_the_same_instances():
    """One seed, one list of instances; another seed, another list."""
    documents = make_documents([[3, 5, 2, 7, 4]] * 8)
    config = InstanceConfig(max_seq_length=16)

    def run(seed):
        rng = np.random.default_rng(seed)
        return [i.input_ids.tolist() for i in iter_instances(documents, range(8), rng, SPECIAL, config)]

    assert run(3) == run(3)
    assert run(3) != run(4)
