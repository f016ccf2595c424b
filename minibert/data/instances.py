"""Pretraining instances: `[CLS] A [SEP] B [SEP]` pairs cut from documents, with a sentence-level label.

Google's `create_instances_from_document` (BERT paper §3.1, "Task #2: Next Sentence Prediction"),
or one of its two alternatives, ALBERT's SOP and RoBERTa's FULL-SENTENCES; the rules are listed below.

A document is a sequence of `Sentence`s, the corpus a sequence of documents (a list, or the memory-mapped
`TokenStore`). Shapes: L the unpadded length of one instance.
"""

# NSP, as Google cuts a document:
# - The target length is `max_num_tokens = max_seq_length - 3` (room for [CLS] and two [SEP]); with
#   probability `short_seq_prob` (0.1) a document uses `randint(2, max_num_tokens)` instead, so the model also
#   sees the short inputs of fine-tuning.
# - Sentences accumulate into a chunk until it reaches the target; a random `a_end` splits the chunk into A
#   and B. Splitting at sentence boundaries (not at a random token) keeps NSP from being trivially easy.
# - NSP: half the time (always, when the chunk is a single sentence) B comes from a random *other* document
#   (NotNext, label 1) and the chunk's unused sentences are put back for the next instance; otherwise B is
#   the rest of the chunk (IsNext, label 0).
# - `truncate_seq_pair` trims the longer side one token at a time, from the front or the back at random.
#
# Two alternatives to NSP (`sentence_task`):
# - "sop", ALBERT's sentence-order prediction (Lan et al. 2019, §4.2): B is always A's true continuation, and
#   half the time the two are swapped (label 1). A one-sentence chunk is split inside the sentence, at a
#   random word start; ALBERT instead falls back to a random document, which would mix NSP back into SOP.
# - "none", RoBERTa's FULL-SENTENCES (Liu et al. 2019, §4.2): `[CLS] sentences... [SEP]`, packed up to
#   `max_seq_length - 2` tokens, running on into the next document after an extra [SEP]. Label always 0.

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert.errors import ConfigError

SENTENCE_TASKS = ("nsp", "sop", "none")
IS_NEXT, NOT_NEXT = 0, 1  # Google's next_sentence_labels; for SOP: 0 in order, 1 swapped


class Sentence(NamedTuple):
    ids: np.ndarray  # (n,) int32 token ids of one corpus line
    word_starts: np.ndarray  # (n,) bool, True where a token begins a whole word


class Instance(NamedTuple):
    input_ids: np.ndarray  # (L,) int32, [CLS] A [SEP] B [SEP], L ≤ max_seq_length
    segment_ids: np.ndarray  # (L,) int32, 0 for [CLS] A [SEP], 1 for B [SEP]
    word_starts: np.ndarray  # (L,) bool
    next_sentence_label: int  # 0 IsNext / in order, 1 NotNext / swapped


@dataclass(frozen=True)
class InstanceConfig:
    max_seq_length: int = 128  # tokens per instance, [CLS] and [SEP] included (BERT-base: 128, then 512)
    short_seq_prob: float = 0.1  # chance that a document aims at a random shorter length
    sentence_task: str = "nsp"  # "nsp" (BERT), "sop" (ALBERT) or "none" (RoBERTa FULL-SENTENCES)

    def __post_init__(self):
        if self.sentence_task not in SENTENCE_TASKS:
            raise ConfigError(f"sentence_task={self.sentence_task!r}; use one of {', '.join(SENTENCE_TASKS)}")
        if self.max_seq_length < 5:
            raise ConfigError(f"max_seq_length={self.max_seq_length} leaves no room for text beside "
                              "[CLS] A [SEP] B [SEP]; use at least 5 (BERT uses 128 and 512)")
        if not 0.0 <= self.short_seq_prob <= 1.0:
            raise ConfigError(f"short_seq_prob={self.short_seq_prob} must be in [0, 1]; BERT uses 0.1")


def join(sentences):
    """Concatenate sentences into one `Sentence` (a side A or B of an instance)."""
    if not sentences:
        return Sentence(np.zeros(0, np.int32), np.zeros(0, bool))
    return Sentence(np.concatenate([sentence.ids for sentence in sentences]),
                    np.concatenate([sentence.word_starts for sentence in sentences]))


def truncate_seq_pair(side_a, side_b, max_num_tokens, rng):
    """Trim A and B (each a `Sentence`) until their lengths sum to at most `max_num_tokens`.

    Google's loop removes one token at a time from the longer side (B on a tie), from its front or back by a
    coin flip. Which side loses a token depends only on the lengths, so we first count the tokens each side
    loses, then flip all of one side's coins at once: the front loses Binomial(k, 1/2) of its k tokens.
    """
    length_a, length_b = len(side_a.ids), len(side_b.ids)
    # BEGIN EXERCISE truncate_seq_pair: while A + B is too long, take a token from the longer side (B on a tie)
    while length_a + length_b > max_num_tokens:
        if length_a > length_b:
            length_a -= 1
        else:
            length_b -= 1
    # END EXERCISE
    return trim(side_a, len(side_a.ids) - length_a, rng), trim(side_b, len(side_b.ids) - length_b, rng)


def trim(side, remove, rng):
    from_front = int(rng.binomial(remove, 0.5)) if remove else 0
    keep = slice(from_front, len(side.ids) - (remove - from_front))
    word_starts = side.word_starts[keep].copy()
    if len(word_starts):
        word_starts[0] = True  # a word cut at the front starts the side anew
    return Sentence(side.ids[keep], word_starts)


def pair_instance(side_a, side_b, label, special_tokens):
    """Lay out `[CLS] A [SEP] B [SEP]` with segment ids 0 for `[CLS] A [SEP]` and 1 for `B [SEP]`."""
    cls_sep = np.array([special_tokens.cls_id], np.int32), np.array([special_tokens.sep_id], np.int32)
    input_ids = np.concatenate([cls_sep[0], side_a.ids, cls_sep[1], side_b.ids, cls_sep[1]]).astype(np.int32)
    segment_ids = np.zeros(len(input_ids), np.int32)
    segment_ids[len(side_a.ids) + 2:] = 1
    one = np.ones(1, bool)
    word_starts = np.concatenate([one, side_a.word_starts, one, side_b.word_starts, one])
    return Instance(input_ids, segment_ids, word_starts, label)


def random_other_document_start(documents, document_index, rng, target_length):
    """B for NotNext: sentences of a random other document from a random start, until `target_length`."""
    # BEGIN EXERCISE nsp_random_document: draw a document other than A's (10 tries), then a random start in it
    for _attempt in range(10):  # Google's bounded retry; with one document only, B comes from the same one
        other = int(rng.integers(len(documents)))
        if other != document_index:
            break
    document = documents[other]
    start = int(rng.integers(len(document)))
    # END EXERCISE
    taken, length = [], 0
    for sentence in document[start:]:
        taken.append(sentence)
        length += len(sentence.ids)
        if length >= target_length:
            break
    return join(taken)


def create_instances_from_document(documents, document_index, rng, special_tokens, config):
    """All NSP or SOP instances of `documents[document_index]` (Google's function of the same name)."""
    document = documents[document_index]
    max_num_tokens = config.max_seq_length - 3
    target_length = max_num_tokens
    if rng.random() < config.short_seq_prob:
        target_length = int(rng.integers(2, max_num_tokens + 1))

    instances, chunk, chunk_length, i = [], [], 0, 0
    while i < len(document):
        chunk.append(document[i])
        chunk_length += len(document[i].ids)
        if i == len(document) - 1 or chunk_length >= target_length:
            a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
            if config.sentence_task == "sop":
                pair = sentence_order_pair(chunk, a_end, rng)
            elif len(chunk) == 1 or rng.random() < 0.5:
                # BEGIN EXERCISE nsp_not_next: B from another document; put unused sentences back
                side_a = join(chunk[:a_end])
                side_b = random_other_document_start(documents, document_index, rng,
                                                     target_length - len(side_a.ids))
                pair = side_a, side_b, NOT_NEXT
                i -= len(chunk) - a_end  # put the unused sentences back for the next chunk
                # END EXERCISE
            else:
                pair = join(chunk[:a_end]), join(chunk[a_end:]), IS_NEXT
            if pair is not None:
                side_a, side_b = truncate_seq_pair(pair[0], pair[1], max_num_tokens, rng)
                instances.append(pair_instance(side_a, side_b, pair[2], special_tokens))
            chunk, chunk_length = [], 0
        i += 1
    return instances


def sentence_order_pair(chunk, a_end, rng):
    """ALBERT's SOP: (A, B, 0) in document order or (B, A, 1) swapped; None if the chunk is one token."""
    if len(chunk) >= 2:
        side_a, side_b = join(chunk[:a_end]), join(chunk[a_end:])
    else:
        sentence = chunk[0]
        if len(sentence.ids) < 2:
            return None
        cuts = np.flatnonzero(sentence.word_starts[1:]) + 1
        cut = int(rng.choice(cuts)) if len(cuts) else int(rng.integers(1, len(sentence.ids)))
        side_a = Sentence(sentence.ids[:cut], sentence.word_starts[:cut])
        side_b = Sentence(sentence.ids[cut:], sentence.word_starts[cut:])
    if rng.random() < 0.5:
        return side_b, side_a, NOT_NEXT
    return side_a, side_b, IS_NEXT


def pack_full_sentences(documents, document_order, special_tokens, max_seq_length):
    """RoBERTa's FULL-SENTENCES: `[CLS] s1 s2 ... [SEP]` packed to at most `max_seq_length` tokens.

    Sentences follow each other across documents, with an extra [SEP] between the last sentence of one
    document and the first of the next (RoBERTa §4.2); a sentence too long for one instance is cut at its end.
    """
    max_num_tokens = max_seq_length - 2
    separator = Sentence(np.array([special_tokens.sep_id], np.int32), np.ones(1, bool))
    packed, length = [], 0
    for document_index in document_order:
        for k, sentence in enumerate(documents[document_index]):
            sentence = Sentence(sentence.ids[:max_num_tokens], sentence.word_starts[:max_num_tokens])
            pieces = [separator, sentence] if k == 0 and packed else [sentence]
            needed = sum(len(piece.ids) for piece in pieces)
            if packed and length + needed > max_num_tokens:
                yield full_sentences_instance(packed, special_tokens)
                pieces, needed, packed, length = [sentence], len(sentence.ids), [], 0
            packed.extend(pieces)
            length += needed
    if packed:
        yield full_sentences_instance(packed, special_tokens)


def full_sentences_instance(packed, special_tokens):
    body = join(packed)
    input_ids = np.concatenate([[special_tokens.cls_id], body.ids, [special_tokens.sep_id]]).astype(np.int32)
    word_starts = np.concatenate([[True], body.word_starts, [True]])
    return Instance(input_ids, np.zeros(len(input_ids), np.int32), word_starts, IS_NEXT)


def iter_instances(documents, document_order, rng, special_tokens, config):
    """Every instance of one pass over `documents`, visiting them in `document_order`."""
    if config.sentence_task == "none":
        yield from pack_full_sentences(documents, document_order, special_tokens, config.max_seq_length)
        return
    for document_index in document_order:
        yield from create_instances_from_document(documents, int(document_index), rng, special_tokens, config)
