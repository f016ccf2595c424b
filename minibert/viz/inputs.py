"""Checking what the drawing functions are given: a matrix, its labels, the points of a curve.

Pictures are often drawn from a model's arrays, so a wrong shape should say which shape it got.
"""

import numpy as np

from minibert.errors import ShapeError


def as_matrix(matrix):
    """`matrix` as a 2-D float64 array, or ShapeError naming its shape."""
    array = np.asarray(matrix, dtype=np.float64)
    if array.ndim != 2 or array.size == 0:
        raise ShapeError(f"expected a non-empty 2-D matrix, got shape {array.shape}; for attention pass one "
                         "head's (S, S) weights, e.g. probs[0, head]")
    return array


def checked_labels(labels, count, axis):
    """`labels` as a list of strings, one per row (or column); None stays None."""
    if labels is None:
        return None
    labels = [str(label) for label in labels]
    if len(labels) != count:
        raise ShapeError(f"{len(labels)} {axis} labels for a matrix with {count} {axis}s; "
                         "give one label each")
    return labels


def finite_points(name, xs, ys):
    """The (xs, ys) of one curve as float arrays, without the points where x or y is NaN or infinite."""
    xs = np.asarray(xs, dtype=np.float64).reshape(-1)
    ys = np.asarray(ys, dtype=np.float64).reshape(-1)
    if xs.shape != ys.shape:
        raise ShapeError(f"series {name!r} has {xs.size} x values but {ys.size} y values")
    keep = np.isfinite(xs) & np.isfinite(ys)
    return xs[keep], ys[keep]
