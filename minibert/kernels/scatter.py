"""Scatter-add of rows: the backward of a row lookup (an embedding, or gathering the masked positions).

A lookup out[i] = table[ids[i]] copies rows; its gradient sends each row of grad_out back to the row it
came from, adding where an id appears more than once (the same token twice in a batch):

    grad_table = zeros(num_rows, C);  grad_table[ids[i]] += grad_out[i]   for every i

Shapes: ids (N,) int, grad_out (N, C) -> grad_table (num_rows, C).
Legend: N looked-up rows (e.g. B*S tokens), C columns (e.g. H hidden), num_rows (e.g. V vocabulary).
"""

import numpy as np
from numba import njit

from minibert.errors import ShapeError
from minibert.kernels.dispatch import choose, float_array


def scatter_add_rows_numpy(ids, rows, num_rows):
    # BEGIN EXERCISE embedding_backward: a zero table, each row added at its id (a repeated id gets the sum)
    table = np.zeros((num_rows, rows.shape[1]), dtype=rows.dtype)
    np.add.at(table, ids, rows)  # unbuffered: a repeated id gets the sum, where table[ids] += rows would not
    return table
    # END EXERCISE


@njit(cache=True)
def scatter_add_rows_numba(ids, rows, num_rows):
    # One pass over the rows, in order: each addition is a contiguous row, which vectorises. Serial on
    # purpose: two threads would race on a repeated id, and the pass costs well under a millisecond.
    table = np.zeros((num_rows, rows.shape[1]), dtype=rows.dtype)
    for i in range(ids.size):
        row = ids[i]
        for j in range(rows.shape[1]):
            table[row, j] += rows[i, j]
    return table


def scatter_add_rows(ids, rows, num_rows):
    """grad_table (num_rows, C) with grad_table[ids[i]] += rows[i]; ids must lie in [0, num_rows)."""
    op = "scatter_add_rows"
    rows = np.ascontiguousarray(float_array(rows, "rows", op))
    ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
    if rows.ndim != 2 or rows.shape[0] != ids.size:
        raise ShapeError(f"{op}: rows {rows.shape} must be (N, C) with one row per id ({ids.size} ids)")
    if ids.size and (ids.min() < 0 or ids.max() >= num_rows):
        raise ShapeError(f"{op}: ids range over [{ids.min()}, {ids.max()}], outside the table's "
                         f"{num_rows} rows")
    return choose(scatter_add_rows_numpy, scatter_add_rows_numba)(ids, rows, num_rows)
