"""Numbers from the command line, checked where they are parsed, with what they mean in the message.

`--doc-stride 0` once made question answering loop forever: the window never moved. A number a user types
is checked by the argparse `type` that reads it, so a bad one stops the command before anything runs, with
one line naming the option, the value and what it must be:

    error: argument --doc-stride: 0 is out of range: the window step (tokens) must be a whole number >= 1
"""

# The library checks its own arguments too (a caller may not come through the command line); these checks
# only make the command line's answer immediate and precise.

import argparse
import math

# NumPy seeds any non-negative integer, but the old `np.random.seed` (and most other tools) take 32 bits.
SEED_LIMIT = 2**32 - 1


class Parser(argparse.ArgumentParser):
    """argparse's parser whose mistakes are one line starting `error: `, like every other mistake (argparse
    prints the whole usage first, which buries the line that matters)."""

    def error(self, message):
        self.exit(2, f"error: {message} (see: {self.prog} --help)\n")


def whole_number(meaning, minimum=1, maximum=None):
    """An argparse type: an int in [minimum, maximum]; `meaning` says what the number counts."""
    bounds = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number: {meaning} must be a whole "
                                             f"number {bounds}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{value} is out of range: {meaning} must be a whole number "
                                             f"{bounds}")
        return value

    return parse


def real_number(meaning, low, high=math.inf, low_included=False, high_included=False, example=None):
    """An argparse type: a finite float in the interval from `low` to `high` (open ends unless included)."""
    interval = f"{'[' if low_included else '('}{low:g}, {high:g}{']' if high_included else ')'}"
    advice = f" (e.g. {example})" if example is not None else ""

    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        inside = ((low <= value if low_included else low < value)
                  and (value <= high if high_included else value < high))
        if not (math.isfinite(value) and inside):
            raise argparse.ArgumentTypeError(f"{text!r}: {meaning} must be a number in {interval}{advice}")
        return value

    return parse


def seed():
    """An argparse type for a random seed: a whole number from 0 to 2**32 - 1."""
    return whole_number("the random seed", minimum=0, maximum=SEED_LIMIT)
