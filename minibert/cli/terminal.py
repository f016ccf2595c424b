"""User text echoed on the terminal, shown so that it cannot act on the terminal.

A text holding `ESC [ 2 J` clears the screen when printed, `ESC [ 31 m` turns what follows red, a carriage
return overwrites the line, and the bidirectional overrides (U+202E...) reorder what is shown. Each such
character is written as its Python escape (`\\x1b`, `\\r`, `\\u202e`) instead; every other character, CJK
and accents included, is shown as it is.
"""

import unicodedata

from minibert.surrogates import shown

# The invisible characters that reorder text (Unicode's bidirectional embeddings, overrides and isolates).
BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text):
    """`text` with every control character (Unicode category Cc: C0, DEL, C1) and bidirectional control
    written as an escape, so that it prints as one inert line; a byte that is not UTF-8 as `\\xff`
    (minibert/surrogates.py), here rather than by the stream, so that a table's columns count it as shown."""
    return shown("".join(char.encode("unicode_escape").decode("ascii")
                         if unicodedata.category(char) == "Cc" or char in BIDI_CONTROLS else char
                         for char in text))
