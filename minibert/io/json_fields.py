"""The JSON files of a model folder, read field by field, each field checked for the type it must have.

A model folder holds JSON files that anyone may have written or edited by hand: tokenizer.json,
tokenizer_config.json, modules.json, sentence_bert_config.json, 1_Pooling/config.json. Parsing one
(`strict_json.py`) only says it is JSON; Python then reads what is inside too kindly. `bool("no")` is True,
so `"do_lower_case": "no"` would lowercase every text; a `5` where a list belongs fails deep inside with
`TypeError: 'int' object is not iterable`. Here each field is taken out with its type, and anything else
stops at once with one line that names the file, the field, the value found and what to do:

    settings = read_object(path, TokenizerError, "fix or delete it")
    settings.boolean("do_lower_case", default=True)        # JSON true or false, nothing else
    settings.integer("max_input_chars_per_word", default=100, minimum=1)   # 100.0 or true is not one
    settings.object("model").string("type")                # a nested object, read the same way

    ->  TokenizerError: DIR/tokenizer_config.json: do_lower_case must be true or false, got the string 'no';
        fix or delete it
"""

from dataclasses import dataclass
from pathlib import Path

from minibert.io.strict_json import describe, parse_json, parse_json_object

REQUIRED = object()  # as a field's default: the file must have the field


@dataclass(frozen=True)
class JsonFile:
    """Where the values come from, for the errors: the file, the error type to raise, and the fix to suggest."""

    path: Path
    error: type
    fix: str

    def refuse(self, name, value, expected):
        raise self.error(f"{self.path}: {name} must be {expected}, got {describe(value)}; {self.fix}")


def read_object(path, error, fix, optional=False):
    """The JSON object in the file at `path`, as a `JsonObject`. optional=True: a missing file reads as {}."""
    file = JsonFile(Path(path), error, fix)
    if optional and not file.path.is_file():
        return JsonObject({}, file)
    return JsonObject(parse_json_object(_read_text(file), file.path, "file", error, fix), file)


def read_objects(path, error, fix):
    """The JSON list of objects in the file at `path` (modules.json), as a list of `JsonObject`s."""
    file = JsonFile(Path(path), error, fix)
    value = parse_json(_read_text(file), file.path, "file", error, fix)
    if not _is_list_of_objects(value):
        file.refuse("the file", value, "a list of objects")
    return _as_objects(value, file, "")


class JsonObject:
    """A JSON object whose fields are taken out checked: each method returns the field's value, or the
    default when the file does not have it, or raises the file's error when the value is of another type.

    JSON null is a value of its own, not "use the default": it is accepted only where a field allows it
    (null=True), as in HuggingFace's files, where `"strip_accents": null` means "follow lowercase".
    """

    def __init__(self, values, file, prefix=""):
        self.values = values  # the parsed dict, for callers that walk it whole (a vocabulary)
        self.file = file
        self.prefix = prefix  # where this object sits in the file, e.g. "model." or "added_tokens[2]."

    def keys(self):
        return self.values.keys()

    def boolean(self, key, default=REQUIRED, null=False):
        """JSON true or false (and null, read as None, if null=True); never Python's truthiness."""
        expected = "true, false or null" if null else "true or false"
        return self._field(key, default, null, expected, lambda value: isinstance(value, bool))

    def integer(self, key, default=REQUIRED, minimum=None, null=False):
        """A JSON integer, at least `minimum`. Not true or false (bool is an int in Python), not 3.0."""
        expected = "an integer" + ("" if minimum is None else f" >= {minimum}") + (" or null" if null else "")
        return self._field(key, default, null, expected,
                           lambda value: type(value) is int and (minimum is None or value >= minimum))

    def string(self, key, default=REQUIRED):
        return self._field(key, default, False, "a string", lambda value: isinstance(value, str))

    def object(self, key, default=REQUIRED):
        """A nested JSON object, as a `JsonObject` of its own (its fields are named `key.field`)."""
        value = self._field(key, default, False, "an object", lambda value: isinstance(value, dict))
        return JsonObject(value, self.file, f"{self.prefix}{key}.") if isinstance(value, dict) else value

    def objects(self, key, default=REQUIRED):
        """A JSON list of objects, as a list of `JsonObject`s (named `key[0].field`, `key[1].field`, ...)."""
        value = self._field(key, default, False, "a list of objects", _is_list_of_objects)
        return _as_objects(value, self.file, self.prefix + key)

    def _field(self, key, default, null, expected, is_valid):
        if key not in self.values:
            if default is REQUIRED:
                raise self.file.error(f"{self.file.path}: {self.prefix}{key} is missing; {self.file.fix}")
            return default
        value = self.values[key]
        if (value is None and null) or is_valid(value):
            return value
        self.file.refuse(self.prefix + key, value, expected)


def _is_list_of_objects(value):
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _as_objects(items, file, name):
    return [JsonObject(item, file, f"{name}[{index}].") for index, item in enumerate(items)]


def _read_text(file):
    try:
        return file.path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise file.error(f"{file.path} is not UTF-8 text ({error}); {file.fix}") from None
    except OSError as error:  # missing, a folder, unreadable
        raise file.error(f"cannot read {file.path}: {error.strerror or error}; {file.fix}") from None
