"""Whether a setting is a usable number: the one check that the model's config, a run's settings, the
optimizers and the schedules share.

A setting a user typed or a file held must be a real number, not a bool (Python counts True as 1, so a
misplaced flag would pass as a size), and finite: NaN passes every range check (nan < 0 and nan >= 0 are both
False) and would turn the whole model into NaN. Each caller then checks its own range and says, in its own
message, what the setting means.
"""

import math
import numbers

from minibert.errors import ConfigError


def is_number(value):
    """True for a finite real number (Python's or NumPy's) that is not a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond float's range (10**400) cannot be used as a float either
        return False


def check_whole(name, value, minimum=0, meaning=None):
    """Refuse anything but a whole number >= `minimum` (a bool is not one), in one line naming the setting,
    its value and, if given, what it means."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        why = f" ({meaning})" if meaning else ""
        raise ConfigError(f"{name}={value!r} must be a whole number >= {minimum}{why}")
