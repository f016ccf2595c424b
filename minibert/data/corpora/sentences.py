"""Splitting a paragraph of prose into sentences, by rule.

BERT's input format wants one sentence per line, because next-sentence prediction pairs *sentences*
(Devlin et al. 2018, section 3.1, "Task #2"; Google's `create_pretraining_data.py` reads one per line).
Google split Wikipedia with a proper sentence splitter; we have no model and no network, so this is a
careful rule: a sentence ends at `.`, `!` or `?` (plus any closing quotes or brackets) when whitespace
and a capital letter follow, unless the period belongs to an abbreviation or an initial.
"""

# What it gets right, and why each rule is there:
# - `1.5`, `numpy.sum`, `os.path.join` never split: no whitespace follows the period.
# - `e.g. Python` and `i.e. The` never split: those abbreviations sit inside sentences.
# - `J. Smith` never splits: a single capital letter before the period is an initial.
# - `etc. The next` *does* split: "etc." usually ends its sentence when a capital follows.
# - `the end.) Next` splits after the bracket, so the bracket stays with its sentence.
# - Chinese `。！？` end a sentence with no whitespace after them.

import regex

# Abbreviations that do not end a sentence even when a capital letter follows (lowercased, no period).
NON_FINAL_ABBREVIATIONS = frozenset(
    "e.g i.e cf vs approx mr mrs ms dr prof sr jr st fig figs eq eqs no nos vol pp al ca resp incl esp viz "
    "inc ltd co dept sec ch ex".split()
)

# A candidate sentence end: terminal punctuation, optional closing quotes/brackets, then whitespace and
# the start of the next sentence (an optional opening quote or bracket, then a capital letter).
# Chinese terminal punctuation needs no whitespace after it.
_LATIN_END = regex.compile(r"""[.!?]["'”’)\]]*(?=\s+["'“‘(\[]?\p{Lu})""")
_CJK_END = regex.compile(r"[。！？]+[”’」』）]*")
_WORD_BEFORE_PERIOD = regex.compile(r"(\S+)\.$")


def _ends_inside_sentence(text_before):
    """True if the period ending `text_before` belongs to an abbreviation or an initial."""
    match = _WORD_BEFORE_PERIOD.search(text_before)
    if match is None:
        return False
    word = match.group(1).lstrip("\"'“‘([")
    if word.endswith("."):  # an ellipsis "..." is a pause, not an end
        return True
    if len(word) == 1 and word.isupper():  # an initial, as in "J. Smith"
        return True
    return word.lower() in NON_FINAL_ABBREVIATIONS


def split_sentences(paragraph):
    """Split one paragraph (line breaks allowed) into a list of sentences, whitespace collapsed."""
    text = " ".join(paragraph.split())
    if not text:
        return []
    cut_points = [match.end() for match in _CJK_END.finditer(text)]
    for match in _LATIN_END.finditer(text):
        if text[match.start()] == "." and _ends_inside_sentence(text[: match.start() + 1]):
            continue
        cut_points.append(match.end())
    sentences = []
    start = 0
    for cut in sorted(set(cut_points)):
        piece = text[start:cut].strip()
        if piece:
            sentences.append(piece)
        start = cut
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences
