"""Parsing JSON that came from a file we do not trust.

`json.loads` accepts things a weights file has no business containing, and that a reader would then
misread or choke on:
- `NaN` and `Infinity`, which are not JSON at all (RFC 8259) but Python accepts by default;
- the same key twice, where Python silently keeps the last one, so two tools could read two different files;
- nesting a million levels deep, which exhausts the parser's recursion limit (RecursionError).
This parser refuses all three with a `CheckpointError` (or the `error` type the caller names) that names
the file. What the fields inside must be is checked by `json_fields.py`.
"""

import json

from minibert.errors import CheckpointError, short_repr

_FIX = "the file is damaged or was not written by a safetensors/minibert writer: download or save it again"


def parse_json(text, source, what="header", error=CheckpointError, fix=_FIX):
    """Parse `text` as JSON and return the value; `source` and `what` name it in errors, `fix` says what to do."""

    def refuse_duplicates(pairs):
        result = {}
        for key, value in pairs:
            if key in result:
                raise error(f"{source}: the {what} names {short_repr(key)} twice; {fix}")
            result[key] = value
        return result

    def refuse_constant(name):
        raise error(f"{source}: the {what} contains {name}, which is not valid JSON; {fix}")

    try:
        return json.loads(text, object_pairs_hook=refuse_duplicates, parse_constant=refuse_constant)
    except error:
        raise
    except RecursionError as problem:
        raise error(f"{source}: the {what} is JSON nested too deeply to be real; {fix}") from problem
    except ValueError as problem:
        raise error(f"{source}: the {what} is not valid JSON ({problem}); {fix}") from problem


def parse_json_object(text, source, what="header", error=CheckpointError, fix=_FIX):
    """Parse `text` as a JSON object (a dict) and return it; anything else is refused as `parse_json` refuses."""
    value = parse_json(text, source, what, error, fix)
    if not isinstance(value, dict):
        raise error(f"{source}: the {what} must be a JSON object, not {describe(value)}; {fix}")
    return value


# Python's types of parsed JSON -> the names JSON gives them, which are what the user sees in the file.
_JSON_KINDS = {str: "string", int: "number", float: "number", list: "list", dict: "object"}


def describe(value):
    """A parsed JSON value as an error names it: `the string 'no'`, `the list [1, 2]`, `true`, `null`."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)  # null, true, false: spelled as in the file, not Python's None/True/False
    return f"the {_JSON_KINDS.get(type(value), type(value).__name__)} {short_repr(value)}"
