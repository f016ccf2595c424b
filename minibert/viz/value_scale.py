"""Mapping values onto [0, 1], for shading: 0 is the lightest shade, 1 the darkest.

By default the scale runs from 0 (or the smallest value, when it is negative) to the largest value (or 0,
when all are negative). So a blank cell always means 0, and attention weights, masks and counts are shaded
in proportion to their size. Pass `value_range=(0, 1)` to draw probabilities on a fixed scale, for example
to compare two models' attention side by side.
"""

import numpy as np


def value_range_of(values, value_range=None):
    """The (low, high) ends of the scale: `value_range` if given, else from 0 and the finite values."""
    if value_range is not None:
        low, high = (float(end) for end in value_range)
        if not low < high:
            raise ValueError(f"value_range={value_range!r} must be (low, high) with low < high")
        return low, high
    finite = values[np.isfinite(values)]
    low = min(0.0, float(finite.min())) if finite.size else 0.0
    high = max(0.0, float(finite.max())) if finite.size else 0.0
    return low, high


def to_unit_interval(values, low, high):
    """(values - low) / (high - low), clipped to [0, 1]; all zeros when low == high. NaN stays NaN."""
    if high == low:
        return np.where(np.isnan(values), np.nan, 0.0)
    return np.clip((values - low) / (high - low), 0.0, 1.0)
