"""The one check of a number setting (minibert/validation.py) that the config, a run's settings, the
optimizers and the schedules share."""

import numpy as np
import pytest

from minibert.errors import ConfigError
from minibert.validation import check_whole, is_number


@pytest.mark.parametrize("value", [0, 3, -2.5, 1e-12, np.float32(0.1), np.int64(7)])
def test_finite_real_numbers_are_numbers(value):
    assert is_number(value)


@pytest.mark.parametrize("value", [True, False, float("nan"), float("inf"), -float("inf"), 10**400, "0.1", None,
                                   [0.1], np.float64("nan")])
def test_bools_nan_infinity_and_non_numbers_are_not(value):
    """A bool would pass as 0 or 1, NaN passes every range check, 10**400 cannot become a float."""
    assert not is_number(value)


@pytest.mark.parametrize("value", [0, 5, np.int64(5)])
def test_whole_numbers_at_or_above_the_minimum_pass(value):
    check_whole("steps", value)


@pytest.mark.parametrize("value, minimum", [(True, 0), (3.0, 0), ("3", 0), (None, 0), (-1, 0), (0, 1), (7, 8)])
def test_anything_else_is_one_line_naming_the_setting_and_what_it_means(value, minimum):
    with pytest.raises(ConfigError, match=r"^steps=.* must be a whole number >= \d+ \(updates to make\)$"):
        check_whole("steps", value, minimum, meaning="updates to make")
