"""Text that may hold any bytes: paths and arguments, and the one rule for writing them out.

On Linux a file name or an argument is bytes, and need not be UTF-8. Python hands such bytes over as lone
surrogates (PEP 383, `surrogateescape`): the byte 0xff in `run\\xff` arrives as the character U+DCFF. Such a
string opens the right file, but no UTF-8 writer takes it: `"run\\udcff".encode("utf-8")` raises. So every
file minibert writes follows one of two rules, both here:

- **A record** (log.jsonl, finetune.json, an experiment's run records, a checkpoint's settings) must give back
  exactly what it was given: a folder's path read from it must reopen that same folder. `record_json` writes
  each lone surrogate as JSON's own escape `\\udcff`, which `json.loads` reads back as the same character.
- **Text shown to a person** (the terminal, pages, SVG pictures, reports) is written escaped, as git shows
  such a name: `shown("run\\udcff")` is `run\\xff`, the byte it stands for, and the command goes on. The
  commands' terminal streams do the same to whatever they print (`show_escaped_on`).

A vocabulary is neither: a token is text the model reads, so one holding a lone surrogate is refused where
vocabularies come in (`holds_surrogate`, used by `minibert/tokenizer/vocab.py`).
"""

import codecs
import io
import json
import re

SURROGATE = re.compile("[\ud800-\udfff]")
SHOWN = "minibert-shown"  # the name of the codec error handler below


def escaped(char):
    """One character a UTF-8 writer cannot take, as a person reads it: `\\xNN` for a byte that surrogateescape
    carried (U+DC80..U+DCFF), else Python's escape (`\\ud800`)."""
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return char.encode("ascii", "backslashreplace").decode("ascii")


def shown(text):
    """`text` as a person should see it: every lone surrogate written as the byte it stands for (`\\xff`)."""
    return SURROGATE.sub(lambda match: escaped(match.group()), text)


def holds_surrogate(text):
    return SURROGATE.search(text) is not None


def record_json(data, **options):
    """`data` as JSON for a file read back by a program: non-ASCII text kept as it is (readable), each lone
    surrogate written as its `\\uXXXX` escape, so that json.loads returns exactly the same strings. (Outside
    strings JSON is ASCII, so every surrogate in `json.dumps`'s text is inside a string.)"""
    text = json.dumps(data, ensure_ascii=False, **options)
    return SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _show_what_cannot_be_encoded(error):
    """The codec error handler SHOWN: what a stream's encoding cannot take is written as `escaped` says."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "".join(escaped(char) for char in error.object[error.start:error.end]), error.end


codecs.register_error(SHOWN, _show_what_cannot_be_encoded)


def show_escaped_on(*streams):
    """Make each stream (sys.stdout, sys.stderr) show what its encoding cannot take as `escaped` says, instead
    of failing the print (a strict UTF-8 terminal) or sending the raw byte. A stream that encodes nothing (an
    io.StringIO) holds the text itself and needs no change."""
    for stream in streams:
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors=SHOWN)
