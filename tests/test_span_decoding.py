"""Span decoding (minibert/finetune/span_decoding.py): the rules of Google's run_squad.py, as properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert.finetune.span_decoding import best_spans, decode_answers
from minibert.finetune.squad_features import QAWindow


@st.composite
def windows(draw):
    """Random logits for one window of S tokens, a passage range inside it, and the decoding limits."""
    seq_len = draw(st.integers(4, 40))
    passage_start = draw(st.integers(1, seq_len - 2))
    passage_end = draw(st.integers(passage_start, seq_len - 2))  # the last token is the final [SEP]
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    start_logits, end_logits = rng.normal(size=seq_len), rng.normal(size=seq_len)
    max_answer_length = draw(st.integers(1, 10))
    n_best_size = draw(st.integers(1, 25))
    return start_logits, end_logits, passage_start, passage_end, max_answer_length, n_best_size


@given(windows())
def test_spans_are_valid(window):
    """Never end < start, never outside the passage, never longer than max_answer_length; best first, each
    scored start_logit + end_logit."""
    start_logits, end_logits, first, last, max_length, n_best = window
    spans = best_spans(start_logits, end_logits, first, last, None, n_best, max_length)
    for span in spans:
        assert first <= span.start <= span.end <= last
        assert span.end - span.start + 1 <= max_length
        assert span.score == pytest.approx(start_logits[span.start] + end_logits[span.end])
    assert [s.score for s in spans] == sorted((s.score for s in spans), reverse=True)
    assert len(spans) <= n_best * n_best


@given(windows())
def test_best_span_is_the_brute_force_best_when_all_positions_compete(window):
    """With n_best_size >= S every pair is considered, so the first span is the best valid pair of all."""
    start_logits, end_logits, first, last, max_length, _ = window
    spans = best_spans(start_logits, end_logits, first, last, None, len(start_logits), max_length)
    valid = [(start_logits[s] + end_logits[e], s, e) for s in range(first, last + 1)
             for e in range(s, min(last, s + max_length - 1) + 1)]
    assert spans[0].score == pytest.approx(max(valid)[0])
    assert len(spans) == len(valid)


@given(windows(), st.data())
def test_singled_out_span_is_found(window, data):
    """When one start and one end logit tower over the rest, that span is the answer."""
    start_logits, end_logits, first, last, max_length, n_best = window
    start = data.draw(st.integers(first, last))
    end = data.draw(st.integers(start, min(last, start + max_length - 1)))
    start_logits[start] = end_logits[end] = 50.0
    spans = best_spans(start_logits, end_logits, first, last, None, n_best, max_length)
    assert (spans[0].start, spans[0].end) == (start, end)


@given(windows(), st.data())
def test_starts_outside_their_max_context_window_are_skipped(window, data):
    """A span may start only at a token whose max-context window is this one."""
    start_logits, end_logits, first, last, max_length, n_best = window
    max_context = data.draw(st.lists(st.booleans(), min_size=last - first + 1, max_size=last - first + 1))
    spans = best_spans(start_logits, end_logits, first, last, max_context, n_best, max_length)
    assert all(max_context[span.start - first] for span in spans)


def test_no_span_when_the_best_positions_are_all_outside_the_passage():
    """run_squad.py pairs only the n best starts and ends: if those all lie in the question, nothing is
    left."""
    start_logits = np.array([9.0, 8.0, 0.0, 0.0, 0.0])  # [CLS] question | passage 2..3 | [SEP]
    end_logits = np.array([9.0, 8.0, 0.0, 0.0, 0.0])
    assert best_spans(start_logits, end_logits, 2, 3, n_best_size=2) == []
    assert len(best_spans(start_logits, end_logits, 2, 3, n_best_size=5)) == 3


def _window(passage_start, offsets, max_context):
    length = passage_start + len(offsets) + 1
    return QAWindow(0, [0] * length, [0] * length, passage_start, offsets, max_context)


def test_decode_answers_ranks_windows_together_and_cuts_the_original_text():
    """Two windows over 'Tom met Mary in Paris.': the span with the higher total wins wherever it is, the
    text comes from the character offsets (original case), and one text found twice counts once."""
    context = "Tom met Mary in Paris."
    offsets = [(0, 3), (4, 7), (8, 12), (13, 15), (16, 21), (21, 22)]  # Tom met Mary in Paris .
    first = _window(2, offsets[:4], [True, True, True, False])  # tokens 0..3 at positions 2..5
    second = _window(2, offsets[2:], [False, True, True, True])  # tokens 2..5 at positions 2..5
    low = np.zeros(7)
    start_a, end_a = low.copy(), low.copy()
    start_a[4], end_a[4] = 3.0, 3.0  # "Mary" in the first window, score 6
    start_b, end_b = low.copy(), low.copy()
    start_b[4], end_b[4] = 4.0, 4.0  # "Paris" in the second window, score 8
    start_b[2], end_b[2] = 2.5, 2.5  # "Mary" again (not max context there: skipped)
    answers = decode_answers([first, second], [start_a, start_b], [end_a, end_b], context, n_best_size=3)
    assert [a.text for a in answers[:2]] == ["Paris", "Mary"]
    assert answers[0].char_start == 16
    assert sum(a.probability for a in answers) == pytest.approx(1.0)
    assert len({a.text for a in answers}) == len(answers)
