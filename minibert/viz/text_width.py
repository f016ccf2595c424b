"""How wide text is on a terminal: Chinese and Japanese characters take two columns, accents none.

Labels such as `我 喜欢 猫` or `##ing` must line up with the columns of a grid, and Python's `len` counts
characters, not columns. Unicode's East Asian Width property says which characters are drawn double width
(W: wide, F: fullwidth); combining marks (category Mn, such as a separate accent) take no column.
Ambiguous characters (A) count as one column, as most terminals outside CJK locales draw them.
"""

import unicodedata


def display_width(text):
    """The number of terminal columns `text` takes."""
    width = 0
    for char in text:
        if unicodedata.category(char) == "Mn":
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def pad_right(text, width):
    """`text` followed by spaces up to `width` columns (unchanged if it is already wider)."""
    return text + " " * max(0, width - display_width(text))


def pad_left(text, width):
    """Spaces, then `text`, up to `width` columns (unchanged if it is already wider)."""
    return " " * max(0, width - display_width(text)) + text
