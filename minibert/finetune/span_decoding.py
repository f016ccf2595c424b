"""From start and end scores to an answer: Google's run_squad.py `write_predictions`, step by step.

The model gives every token a start logit and an end logit. The answer is the span (start, end) with the
highest start_logit + end_logit among the spans that make sense (the four rules are in the comment below).
The surviving spans of all windows of a question are ranked together; the same answer text found in two
windows counts once, with its better score; the text is cut from the original passage through the
tokens' character offsets.
Legend: S sequence length (of one window).
"""

# The spans that make sense:
# 1. only the `n_best_size` (20) best starts and the 20 best ends are paired, 400 pairs at most instead
#    of S²;
# 2. both ends lie inside the passage (not in the question, [CLS] or [SEP]);
# 3. start <= end, and the span has at most `max_answer_length` (30) tokens;
# 4. the start token is in its max-context window (`squad_features.py`), so that a token seen in two
#    windows is judged where the model saw the most around it.

from dataclasses import dataclass

import numpy as np


@dataclass
class Span:
    start: int  # position of the answer's first token in the window's input_ids
    end: int  # position of its last token (inclusive)
    score: float  # start_logit[start] + end_logit[end]


def top_indexes(logits, count):
    """The positions of the `count` largest logits, largest first (the earlier position on ties)."""
    return np.argsort(-np.asarray(logits), kind="stable")[:count]


def best_spans(start_logits, end_logits, passage_start, passage_end, max_context=None, n_best_size=20,
               max_answer_length=30):
    """The valid spans of one window, best first.

    start_logits, end_logits: (S,) scores of one window. passage_start, passage_end: positions of its first
    and last passage tokens (inclusive). max_context: for each passage token, whether this window is its
    max-context window (None: every token is).
    """
    spans = []
    for start in top_indexes(start_logits, n_best_size):
        for end in top_indexes(end_logits, n_best_size):
            if not passage_start <= start <= end <= passage_end:  # inside the passage, start <= end
                continue
            if end - start + 1 > max_answer_length:
                continue
            if max_context is not None and not max_context[start - passage_start]:
                continue
            spans.append(Span(int(start), int(end), float(start_logits[start] + end_logits[end])))
    spans.sort(key=lambda span: -span.score)  # stable: ties keep the order of the better start
    return spans


@dataclass
class Answer:
    text: str  # cut from the original passage
    score: float  # start_logit + end_logit
    probability: float  # softmax of the scores over the n-best answers (run_squad.py's nbest_json)
    char_start: int  # where `text` starts in the passage


def decode_answers(windows, start_logits, end_logits, context, n_best_size=20, max_answer_length=30):
    """The n best answers to one question, best first, from all its windows (QAWindows).

    start_logits[i], end_logits[i]: the (S,) logits of windows[i] (padding beyond its length is ignored).
    An empty list means no valid span was found (all best starts and ends were outside the passage).
    """
    candidates = []
    for window, starts, ends in zip(windows, start_logits, end_logits, strict=True):
        passage_end = window.passage_start + len(window.offsets) - 1
        for span in best_spans(starts, ends, window.passage_start, passage_end, window.max_context,
                               n_best_size, max_answer_length):
            char_start = window.offsets[span.start - window.passage_start][0]
            char_end = window.offsets[span.end - window.passage_start][1]
            candidates.append((span.score, char_start, char_end))
    candidates.sort(key=lambda candidate: -candidate[0])
    best, seen = [], set()
    for score, char_start, char_end in candidates:
        text = context[char_start:char_end]
        if text not in seen:
            seen.add(text)
            best.append((text, score, char_start))
        if len(best) == n_best_size:
            break
    if not best:
        return []
    scores = np.array([score for _, score, _ in best])
    probabilities = np.exp(scores - scores.max())
    probabilities /= probabilities.sum()
    return [Answer(text, score, float(probability), start)
            for (text, score, start), probability in zip(best, probabilities, strict=True)]
