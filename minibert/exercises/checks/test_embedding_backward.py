"""Exercise embedding_backward (lesson 06): `scatter_add_rows_numpy` in minibert/kernels/scatter.py.

The lookup out = E[ids] sends each output row's gradient back to row ids[...] of E; an id used twice gets
the sum of both (np.add.at: `table[ids] += rows` would keep only one). Rows never looked up get 0.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.kernels.scatter import scatter_add_rows_numpy
from minibert.nn.embedding import embedding


def test_repeated_ids_get_the_sum():
    """ids [2, 0, 2] and rows [[1, 1], [2, 2], [10, 10]] into a table of 4 rows: row 2 gets 11, row 0 gets 2,
    rows 1 and 3 stay 0."""
    table = scatter_add_rows_numpy(np.array([2, 0, 2]), np.array([[1.0, 1.0], [2.0, 2.0], [10.0, 10.0]]), 4)
    np.testing.assert_array_equal(table, [[2, 2], [0, 0], [11, 11], [0, 0]])


def test_gradcheck_the_lookup():
    """E (5, 3) looked up at ids (2, 4) with repeats: E's gradient agrees with finite differences."""
    rng = np.random.default_rng(0)
    weight = Tensor(rng.standard_normal((5, 3)), requires_grad=True)
    ids = np.array([[1, 1, 4, 0], [0, 3, 1, 1]])
    projection = rng.standard_normal((2, 4, 3))
    assert gradcheck(lambda w: embedding(ids, w) * projection, weight, names=("weight",))
