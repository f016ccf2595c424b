"""Warnings about input data that is usable but probably not what the user meant.

Errors (`minibert.errors.DataError`) stop the build; these warnings let it go on. A corpus can have thousands
of lines with the same problem, so `LineSample` counts them and keeps the first few line numbers: one warning
per kind of problem, in the `file:line:` form editors can jump to.
"""

import warnings


class DataWarning(UserWarning):
    """Input data that minibert can use, with a cost the user should know about."""


def warn(message):
    warnings.warn(DataWarning(message), stacklevel=3)


class LineSample:
    """How many lines of a file show one problem, and where the first few are."""

    def __init__(self, keep=5):
        self.count, self.keep, self.lines = 0, keep, []

    def add(self, line_number):
        self.count += 1
        if len(self.lines) < self.keep:
            self.lines.append(line_number)

    def warn(self, path, what, fix):
        """One warning `path:first_line: <count> <what> (lines ...); <fix>`, if any line was added."""
        if not self.count:
            return
        shown = ", ".join(str(line) for line in self.lines)
        if self.count > len(self.lines):
            shown += ", ..."
        lines = "lines" if self.count > 1 else "line"
        warn(f"{path}:{self.lines[0]}: {self.count} {what} ({lines} {shown}); {fix}")
