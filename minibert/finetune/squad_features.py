"""SQuAD questions as BERT inputs: `[CLS] question [SEP] passage window [SEP]`, as Google's run_squad.py.

Three ideas, in the order they are used (each explained in the comment below):
1. **Offsets.** Every WordPiece of the passage remembers the characters of the original text it came from.
2. **Windows.** A passage longer than the room left by the question is read in overlapping windows.
3. **Max context.** A token inside several windows is scored, as an answer start, only in the window
   where it has the most context on both sides.
For training, the answer's first and last tokens become `start_position` and `end_position`; a window
that does not hold the whole answer points both at [CLS] (position 0), as run_squad.py does for v1.1.
"""

# 1. Offsets (`wordpieces_with_offsets`): an answer found as token positions is cut from the passage as the
#    user wrote it (`Übermensch`, not `ubermensch`), and a gold answer given as a character offset becomes
#    token positions. An answer is cut as whole words: run_squad.py maps each token to its original word
#    (`tok_to_orig_index`) and answers with those words' text, so a span starting at `##d` of `word` still
#    answers `word`. Our words are the basic tokenizer's (punctuation apart), the text Google's
#    `get_final_text` recovers from its whitespace words; character offsets make that re-alignment unnecessary.
# 2. Windows: the window starts move by `doc_stride` tokens (run_squad.py's `doc_spans`), at least 1, or the
#    loop would never end.
# 3. Max context: score = min(tokens left, tokens right) + 0.01·window length (`_check_is_max_context`).
#    Near a window's edge the model sees half a sentence.

import unicodedata
from dataclasses import dataclass

import numpy as np

from minibert.errors import ConfigError, DataError, TokenizerError
from minibert.tokenizer.wordpiece import CONTINUATION_PREFIX


def wordpieces_with_offsets(tokenizer, text):
    """The WordPieces of `text` and, for each, its (start, end) character span in `text` (end exclusive).

    The basic tokenizer normalises one character at a time (cleaning, accents, case), so normalising each
    character alone and remembering where each output character came from gives a map from the normalised
    text back to the original. Each word of the basic tokenizer is found in the normalised text, and its
    pieces divide it in order; an [UNK] covers its whole word.
    """
    basic = tokenizer.basic
    normal_of = {char: basic.normalize(char) for char in set(text)}
    normalized, origin = [], []  # origin[i]: index in `text` of normalized character i
    for index, char in enumerate(text):
        normalized.append(normal_of[char])
        origin.extend([index] * len(normal_of[char]))
    normalized = "".join(normalized)
    pieces, offsets, cursor = [], [], 0
    for word in basic.tokenize(text):
        start = normalized.find(basic.normalize(word), cursor)
        if start < 0:
            raise TokenizerError(f"cannot align the word {word!r} with the text {text[:60]!r}")
        cursor = start + len(basic.normalize(word))
        word_end = _end_with_marks(text, origin[cursor - 1] + 1)
        word_pieces = tokenizer.wordpiece.tokenize_word(word)
        if word_pieces == (tokenizer.wordpiece.unk_token,):
            pieces.append(word_pieces[0])
            offsets.append((origin[start], word_end))
            continue
        for piece in word_pieces:
            length = len(piece) - (len(CONTINUATION_PREFIX) if piece.startswith(CONTINUATION_PREFIX) else 0)
            pieces.append(piece)
            end = origin[start + length - 1] + 1
            offsets.append((origin[start], word_end if start + length == cursor else end))
            start += length
    return pieces, offsets


def _end_with_marks(text, end):
    """`end` moved past the combining marks that follow it. Stripping accents normalises a decomposed
    (NFD) accent to nothing, so no normalised character points at it; it still belongs to its letter:
    "e\u0301te\u0301" must end after its last accent."""
    while end < len(text) and unicodedata.category(text[end]).startswith("M"):
        end += 1
    return end


def whole_word_spans(pieces, offsets):
    """For each WordPiece, the (start, end) characters of the whole word it belongs to: its first piece
    and the ## pieces after it (run_squad.py's `tok_to_orig_index`, as character spans)."""
    words, word_of_piece = [], []  # words: [start, end] of each word, in order
    for piece, (start, end) in zip(pieces, offsets, strict=True):
        if piece.startswith(CONTINUATION_PREFIX) and words:
            words[-1][1] = end
        else:
            words.append([start, end])
        word_of_piece.append(len(words) - 1)
    return [tuple(words[index]) for index in word_of_piece]


def answer_token_span(offsets, answer_start, answer_end):
    """(first, last) indexes of the passage tokens covering characters answer_start..answer_end-1."""
    covering = [index for index, (start, end) in enumerate(offsets)
                if start < answer_end and end > answer_start]
    return (covering[0], covering[-1]) if covering else None


def check_doc_stride(doc_stride):
    """A window step must be a whole number >= 1: with 0 (or less) the next window starts where the last
    one did, and the windows never reach the end of the passage."""
    if not _is_count(doc_stride) or doc_stride < 1:
        raise ConfigError(f"doc_stride={doc_stride!r}: the step between windows must be a whole number of "
                          "tokens >= 1 (run_squad.py: 128)")


def _is_count(value):
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def window_spans(num_tokens, max_tokens, doc_stride):
    """(start, length) of each window over `num_tokens` passage tokens: run_squad.py's doc_spans.

    The loop ends: every pass moves `start` by min(length, doc_stride) >= 1 (length >= 1 because the
    window did not reach the end), so it reaches num_tokens within num_tokens passes."""
    check_doc_stride(doc_stride)
    if not _is_count(max_tokens) or max_tokens < 1:
        raise ConfigError(f"max_tokens={max_tokens!r}: a window must hold at least one passage token")
    spans, start = [], 0
    while True:
        length = min(num_tokens - start, max_tokens)
        spans.append((start, length))
        if start + length >= num_tokens:
            return spans
        start += min(length, doc_stride)


def best_window_of_tokens(spans, num_tokens):
    """For each passage token, the index of the window where it has the most context (first on ties)."""
    best_score = np.full(num_tokens, -np.inf)
    best_window = np.zeros(num_tokens, dtype=np.int64)
    for window, (start, length) in enumerate(spans):
        positions = np.arange(start, start + length)
        score = np.minimum(positions - start, start + length - 1 - positions) + 0.01 * length
        better = score > best_score[positions]  # strictly: an earlier window keeps a tie
        best_score[positions[better]] = score[better]
        best_window[positions[better]] = window
    return best_window


@dataclass
class QAWindow:
    """One model input for one question: the question and one window of its passage."""

    example_index: int  # which QuestionExample this window reads
    input_ids: list  # [CLS] question [SEP] passage window [SEP]
    segment_ids: list  # 0 for [CLS] question [SEP], 1 for the window and its [SEP]
    passage_start: int  # position of the window's first passage token in input_ids
    offsets: list  # (start, end) in the context of the whole word of each passage token of the window
    max_context: list  # for each passage token of the window: is this its best window?
    start_position: int = 0  # the answer's first token in input_ids; 0 ([CLS]) if not in this window
    end_position: int = 0


def question_windows(example, example_index, tokenizer, max_seq_length=384, doc_stride=128,
                     max_query_length=64, with_answer=True):
    """The QAWindows of one QuestionExample (run_squad.py `convert_examples_to_features`).

    The question is cut to `max_query_length` tokens, as Google does; if it still leaves no room for the
    passage in `max_seq_length`, that is an error naming the question's file and line.
    """
    question_ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.question))[:max_query_length]
    room = max_seq_length - len(question_ids) - 3  # [CLS] question [SEP] ... [SEP]
    if room < 1:
        raise DataError(f"{example.source}: the question has {len(question_ids)} tokens and leaves no room "
                        f"for the passage in max_seq_length={max_seq_length}; raise max_seq_length or lower "
                        f"max_query_length={max_query_length}")
    pieces, offsets = wordpieces_with_offsets(tokenizer, example.context)
    if not pieces:
        raise DataError(f"{example.source}: the passage has no tokens")
    passage_ids = tokenizer.convert_tokens_to_ids(pieces)
    answer = None
    if with_answer:
        if not example.answers:
            raise DataError(f"{example.source}: a training question needs an answer, and this one has none "
                            "(\"answers\": []); give its answer, or remove the question")
        answer_text, answer_start = example.answers[0]  # training uses the first answer, as Google does
        answer = answer_token_span(offsets, answer_start, answer_start + len(answer_text))
    words = whole_word_spans(pieces, offsets)
    spans = window_spans(len(pieces), room, doc_stride)
    best_window = best_window_of_tokens(spans, len(pieces))
    head = [tokenizer.cls_token_id, *question_ids, tokenizer.sep_token_id]
    windows = []
    for window_index, (start, length) in enumerate(spans):
        window = QAWindow(example_index, [*head, *passage_ids[start:start + length], tokenizer.sep_token_id],
                          [0] * len(head) + [1] * (length + 1), len(head), words[start:start + length],
                          (best_window[start:start + length] == window_index).tolist())
        if answer is not None and start <= answer[0] and answer[1] < start + length:
            window.start_position = len(head) + answer[0] - start
            window.end_position = len(head) + answer[1] - start
        windows.append(window)
    return windows
