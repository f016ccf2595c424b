"""minibert's own error types.

Every error a user can cause is one of these, with a message that names the bad value and says what to do.
They subclass the built-in type a Python user would expect (ValueError, TypeError, OSError), so
`except ValueError` still works, and the command line can tell our errors (one readable line) from bugs
(a full traceback). `short_repr` quotes a bad value in a message without quoting a megabyte of it.
"""


class MinibertError(Exception):
    """Base class: something the user can fix, described in the message."""


class ShapeError(MinibertError, ValueError):
    """Arrays whose shapes do not fit together."""


class ConfigError(MinibertError, ValueError):
    """A model or training configuration that cannot work."""


class TokenizerError(MinibertError, ValueError):
    """A bad vocabulary file or bad text given to the tokenizer."""


class DataError(MinibertError, ValueError):
    """A corpus, shard or dataset file that cannot be used."""


class CheckpointError(MinibertError, ValueError):
    """A checkpoint or weights file that is missing, corrupt, hostile or from another model."""


class GradcheckError(MinibertError, AssertionError):
    """An analytic gradient that disagrees with finite differences."""


def short_repr(value, limit=80):
    """`repr(value)` cut to `limit` characters, as an error message quotes a bad value: a hostile file may
    hold a 100 MB name."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
