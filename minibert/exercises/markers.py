"""Exercise markers in the reference source, and the two rewrites they allow.

A function body (or any block of lines) that a student re-implements is fenced in the reference code by two
comment lines at the block's indentation, nbgrader-style: above it `# BEGIN EXERCISE <id>: <short hint>`,
below it `# END EXERCISE`. They go after the signature and the docstring, which the student keeps.
"""

# `stub_source` replaces the lines between the markers with one `raise NotImplementedError("...hint...")`,
# keeping the signature, the docstring and the markers themselves (so the student sees where to write);
# `fill_source` puts reference lines back between the markers of a stubbed file. Since the stubs are cut from
# the current reference every time, they can never drift from it.

import re
from dataclasses import dataclass

BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN EXERCISE (?P<id>[a-z][a-z0-9_]*): (?P<hint>\S.*?)\s*$")
END = re.compile(r"^(?P<indent>[ \t]*)# END EXERCISE\s*$")
LOOSE = re.compile(r"^\s*#\s*(BEGIN|END)\s+EXERCISE", re.IGNORECASE)


class MarkerError(ValueError):
    """Markers that do not pair up, or an id used twice."""


@dataclass(frozen=True)
class Exercise:
    id: str
    hint: str
    path: str  # the file, relative to the package's parent directory (e.g. "minibert/gradient_check.py")
    begin: int  # 0-based line index of the BEGIN marker
    end: int  # 0-based line index of the END marker
    indent: str
    body: tuple  # the reference lines between the markers, newlines included


def find_exercises(source, path):
    """The exercises marked in one file's text, in order. Raises MarkerError on a malformed pair."""
    lines = source.splitlines(keepends=True)
    found, opened, opened_at = [], None, None  # opened: the BEGIN match still waiting for its END
    for index, line in enumerate(lines):
        begin, end = BEGIN.match(line), END.match(line)
        where = f"{path}:{index + 1}"
        if begin:
            if opened is not None:
                raise MarkerError(f"{where}: BEGIN EXERCISE inside exercise {opened['id']!r} "
                                  f"(line {opened_at + 1}); close that one first")
            opened, opened_at = begin, index
        elif end:
            if opened is None:
                raise MarkerError(f"{where}: END EXERCISE without a BEGIN EXERCISE above it")
            if end["indent"] != opened["indent"]:
                raise MarkerError(f"{where}: END EXERCISE indented unlike its BEGIN (line {opened_at + 1})")
            body = tuple(lines[opened_at + 1:index])
            if not any(line.strip() and not line.strip().startswith("#") for line in body):
                raise MarkerError(f"{where}: exercise {opened['id']!r} has no code between its markers")
            found.append(Exercise(opened["id"], opened["hint"], path, opened_at, index, opened["indent"],
                                  body))
            opened = None
        elif LOOSE.match(line):
            raise MarkerError(f"{where}: malformed exercise marker {line.strip()!r}; write "
                              "'# BEGIN EXERCISE <id>: <hint>' or '# END EXERCISE'")
    if opened is not None:
        raise MarkerError(f"{path}:{opened_at + 1}: BEGIN EXERCISE {opened['id']!r} is never closed")
    return found


def stub_line(exercise):
    message = f"exercise {exercise.id}: {exercise.hint}"
    return f"{exercise.indent}raise NotImplementedError({message!r})\n"


def stub_source(source, path, ids):
    """`source` with the bodies of the exercises named in `ids` replaced by a NotImplementedError."""
    return _replace_bodies(source, path, {exercise.id: [stub_line(exercise)]
                                          for exercise in find_exercises(source, path) if exercise.id in ids})


def fill_source(source, path, bodies):
    """`source` with the exercises named in `bodies` (id -> reference lines) given those lines back."""
    return _replace_bodies(source, path, {key: list(lines) for key, lines in bodies.items()})


def _replace_bodies(source, path, new_bodies):
    lines = source.splitlines(keepends=True)
    for exercise in reversed(find_exercises(source, path)):  # from the bottom, so indices stay valid
        if exercise.id in new_bodies:
            lines[exercise.begin + 1:exercise.end] = new_bodies[exercise.id]
    return "".join(lines)
