"""BERT's basic tokenizer: raw text -> words, before WordPiece sees them.

The steps, in BERT's order (Google's `tokenization.py` `BasicTokenizer`; HuggingFace's `BertNormalizer` and
`BertPreTokenizer`):

1. keep `never_split` strings (the special tokens such as `[MASK]`) whole, untouched by every later step;
2. clean: drop NUL, U+FFFD and invisible "other" characters; every whitespace character becomes a separator;
3. lowercase and strip accents (optional): NFD, drop the combining marks (category Mn), then `lower()`;
4. split: each CJK ideograph and each punctuation character is its own token; whitespace separates the rest.
"""

# Google's code walks the text one character at a time in Python. Here each step is one pass of a precompiled
# `regex` pattern over the whole text, so the work happens in C: the same rules, several times faster.

import unicodedata

import regex

from minibert.errors import TokenizerError

# Step 2. NUL and U+FFFD (the replacement character left by bad decoding) go, and so does every character of
# the "other" categories: Cc control, Cf format (zero-width joiners, byte-order marks, bidi marks), Co
# private use, Cs lone surrogates. \t \n \r are Cc, but BERT counts them as whitespace.
# Google's code drops only Cc and Cf; HuggingFace (its Rust and its Python tokenizer) also drops Co and Cs.
# We follow HuggingFace here, because a vocab.txt must give the ids HuggingFace gives. Unassigned code
# points (Cn) are kept, as Google and HuggingFace's Rust tokenizer keep them.
_DROPPED = regex.compile(r"[[\x00\ufffd\p{Cc}\p{Cf}\p{Co}\p{Cs}]--[\t\n\r]]", flags=regex.V1)

# Steps 2 and 4. Whitespace: \t \n \r and the Unicode separators (Zs spaces, Zl line, Zp paragraph).
_WHITESPACE = r"\t\n\r\p{Z}"

# Step 4. BERT's CJK ranges: the CJK Unified Ideographs blocks and their extensions, plus the compatibility
# ideographs. Hangul, hiragana and katakana are NOT here: those scripts put spaces between words, so BERT
# treats them like Latin letters.
_CJK = (
    r"\u4E00-\u9FFF\u3400-\u4DBF\U00020000-\U0002A6DF\U0002A700-\U0002B73F\U0002B740-\U0002B81F"
    r"\U0002B820-\U0002CEAF\uF900-\uFAFF\U0002F800-\U0002FA1F"
)

# Step 4. Punctuation: every Unicode category P*, plus all non-alphanumeric printable ASCII (33-47, 58-64,
# 91-96, 123-126). Google adds the ASCII symbols so that `$ + < = > ^ ` | ~` (categories S*, not P*) split
# too.
_PUNCTUATION = r"\p{P}!-/:-@\[-`{-~"

# One pass of step 4: a CJK character, or a punctuation character, or a run of anything else but whitespace.
_PIECES = regex.compile(rf"[{_CJK}{_PUNCTUATION}]|[^{_CJK}{_PUNCTUATION}{_WHITESPACE}]+")

_NONSPACING_MARKS = regex.compile(r"\p{Mn}+")

# Fast path for pure-ASCII text (most English). One `str.translate` drops the control characters and puts
# spaces around each punctuation character; `str.split()` then splits on whitespace. The table is derived from
# the patterns above, so the two paths share their rules; it runs several times faster than the regex engine.
_ASCII_TABLE = {
    code: None if _DROPPED.match(chr(code)) else f" {chr(code)} "
    for code in range(128)
    if _DROPPED.match(chr(code)) or regex.match(f"[{_PUNCTUATION}]", chr(code))
}


def as_text(text):
    """`text` as a str: str passes through, bytes must be UTF-8 (as Google's `convert_to_unicode`)."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray)):
        try:
            return bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            raise TokenizerError(
                f"text bytes are not valid UTF-8 ({error}); decode them with the right encoding first"
            ) from None
    raise TokenizerError(f"text must be a str (or UTF-8 bytes), got {type(text).__name__}: {text!r:.60}")


def clean_text(text):
    """Step 2: drop NUL, U+FFFD and Cc/Cf/Co/Cs characters (but not \\t \\n \\r)."""
    return _DROPPED.sub("", text)


def strip_accents(text):
    """Decompose (NFD: `é` -> `e` + U+0301) and drop the nonspacing marks (category Mn): `é` -> `e`."""
    if text.isascii():  # ASCII has nothing to decompose: skip the work on the common case
        return text
    return _NONSPACING_MARKS.sub("", unicodedata.normalize("NFD", text))


def lowercase(text):
    """`str.lower()`, one character at a time.

    Python's `lower()` maps a capital sigma at the end of a word to `ς`; HuggingFace's Rust tokenizer
    lowercases one character at a time and gives `σ`. Replacing `Σ` first makes `lower()` purely
    per-character, as in Rust.
    """
    return text.replace("Σ", "σ").lower()


class BasicTokenizer:
    """Clean, optionally lowercase and strip accents, split on whitespace, punctuation and CJK characters.

    `do_lower_case=True` lowercases and strips accents (BERT's uncased models). `strip_accents` overrides the
    second half: None follows `do_lower_case` (BERT's behaviour), True or False forces it on or off.
    `never_split` strings (e.g. `[MASK]`) are found anywhere in the raw text and kept whole, as HuggingFace
    keeps its special tokens: `x[MASK]y` -> `x [MASK] y`.
    """

    def __init__(self, do_lower_case=True, never_split=(), strip_accents=None):
        self.do_lower_case = bool(do_lower_case)
        self.strip_accents = self.do_lower_case if strip_accents is None else bool(strip_accents)
        self.never_split = frozenset(never_split)
        if any(not isinstance(token, str) or not token for token in self.never_split):
            raise TokenizerError(f"never_split must hold non-empty strings, got {list(never_split)!r}")
        # Longest first, so that of two never_split strings starting at one place the longer wins.
        alternatives = sorted(self.never_split, key=lambda token: (-len(token), token))
        self._never_split_pattern = regex.compile("(" + "|".join(map(regex.escape, alternatives)) + ")")
        # Text with none of their first characters (no `[` for BERT's specials) skips the search.
        self._never_split_starts = frozenset(token[0] for token in self.never_split)

    def tokenize(self, text):
        """Text -> list of words, punctuation characters, CJK characters and never_split tokens."""
        text = as_text(text)
        if not any(char in text for char in self._never_split_starts):
            return self._split(text)
        tokens = []
        # regex.split with a capturing group alternates: text, match, text, match, ..., text.
        for index, part in enumerate(self._never_split_pattern.split(text)):
            if index % 2:
                tokens.append(part)
            elif part:
                tokens.extend(self._split(part))
        return tokens

    def normalize(self, text):
        """Steps 2 and 3 on text with no never_split tokens in it."""
        text = clean_text(text)
        if self.strip_accents:
            text = strip_accents(text)
        if self.do_lower_case:
            text = lowercase(text)
        return text

    def _split(self, text):
        if text.isascii():  # nothing to strip, no CJK, and lower() is per-character: the fast path
            return (text.lower() if self.do_lower_case else text).translate(_ASCII_TABLE).split()
        return _PIECES.findall(self.normalize(text))
