"""Where a value sits in a JSON file, as `file:line:column`, for error messages.

`json.load` gives back dicts and lists with no trace of where they came from, and SQuAD files are often
one single line of megabytes. To point a user at a bad answer, `JsonSource` keeps the file's text and
the value's path (`data[3].paragraphs[0].qas[2]`) and finds the line and column only when a message needs
them: a walk along the path that skips every value beside it with the standard decoder.
"""

import json

_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


class JsonSource:
    """The place of one value in a JSON file; `str()` gives `file:line:column (path)`."""

    def __init__(self, path, text, steps=()):
        self.path, self.text, self.steps = path, text, tuple(steps)

    def __truediv__(self, step):
        """The source of the value at key or index `step` inside this one."""
        return JsonSource(self.path, self.text, (*self.steps, step))

    def __str__(self):
        line, column = locate(self.text, self.steps)
        return f"{self.path}:{line}:{column} ({self.dotted()})"

    def dotted(self):
        """The path as a reader writes it: data[3].paragraphs[0].qas[2]."""
        parts = []
        for step in self.steps:
            parts.append(f"[{step}]" if isinstance(step, int) else f".{step}")
        return "".join(parts).lstrip(".") or "the top level"


def locate(text, steps):
    """(line, column), both from 1, where the value reached by `steps` (keys and indexes) begins in `text`,
    which must be valid JSON holding that path."""
    position = _skip_space(text, 0)
    for step in steps:
        position = _skip_space(text, position + 1)  # past '{' or '['
        if isinstance(step, int):
            for _ in range(step):
                position = _next_item(text, _DECODER.raw_decode(text, position)[1])
            continue
        while True:
            key, position = _DECODER.raw_decode(text, position)
            position = _skip_space(text, _skip_space(text, position) + 1)  # past ':'
            if key == step:
                break
            position = _next_item(text, _DECODER.raw_decode(text, position)[1])
    line = text.count("\n", 0, position) + 1
    return line, position - (text.rfind("\n", 0, position) + 1) + 1


def _skip_space(text, position):
    while position < len(text) and text[position] in _WHITESPACE:
        position += 1
    return position


def _next_item(text, position):
    """From the end of one item of an object or array, past the ',' to the start of the next."""
    return _skip_space(text, _skip_space(text, position) + 1)
