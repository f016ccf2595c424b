"""Parsing JSON that came from a file we do not trust.

`json.loads` accepts things a weights file has no business containing, and that a reader would then
misread or choke on:
- `NaN` and `Infinity`, which are not JSON at all (RFC 8259) but Python accepts by default;
- the same key twice, where Python silently keeps the last one, so two tools could read two different files;
- nesting a million levels deep, which exhausts the parser's recursion limit (RecursionError).
This parser refuses all three with a `CheckpointError` that names the file.
"""

import json

from minibert.errors import CheckpointError


def parse_json_object(text, source, what="header"):
    """Parse `text` as a JSON object (a dict) and return it; `source` and `what` name it in errors."""

    def refuse_duplicates(pairs):
        result = {}
        for key, value in pairs:
            if key in result:
                raise CheckpointError(f"{source}: the {what} names {short_repr(key)} twice; {_FIX}")
            result[key] = value
        return result

    def refuse_constant(name):
        raise CheckpointError(f"{source}: the {what} contains {name}, which is not valid JSON; {_FIX}")

    try:
        value = json.loads(text, object_pairs_hook=refuse_duplicates, parse_constant=refuse_constant)
    except CheckpointError:
        raise
    except RecursionError as error:
        raise CheckpointError(f"{source}: the {what} is JSON nested too deeply to be real; {_FIX}") from error
    except ValueError as error:
        raise CheckpointError(f"{source}: the {what} is not valid JSON ({error}); {_FIX}") from error
    if not isinstance(value, dict):
        kind = type(value).__name__
        raise CheckpointError(f"{source}: the {what} must be a JSON object, not a {kind}; {_FIX}")
    return value


_FIX = "the file is damaged or was not written by a safetensors/minibert writer: download or save it again"


def short_repr(name, limit=80):
    """`repr(name)`, cut to `limit` characters: a hostile file may hold a 100 MB name."""
    text = repr(name)
    return text if len(text) <= limit else text[: limit - 3] + "..."
