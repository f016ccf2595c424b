"""Exercise embedding_op_backward (lesson 06): `EmbeddingOp.backward` in minibert/nn/embedding.py.

out = E[ids]  ->  row v of E's gradient is the sum of the output gradients at the places where id v was
looked up, 0 for an id never seen; the ids are integers and get no gradient. The referee is the sums by hand
and finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.nn.embedding import embedding


def test_rows_by_hand():
    """ids [[2, 0], [2, 3]] into a table of 5 rows of 2: row 2 gets the sum of two gradients, rows 1 and 4
    get 0."""
    table = Tensor(np.zeros((5, 2)), requires_grad=True)
    grad = np.array([[[1.0, 2.0], [3.0, 4.0]], [[10.0, 20.0], [30.0, 40.0]]])  # (2, 2, H)
    embedding(np.array([[2, 0], [2, 3]]), table).backward(grad)
    assert table.grad is not None, "the table got no gradient: return (None for the ids, the table's gradient)"
    np.testing.assert_array_equal(table.grad, [[3, 4], [0, 0], [11, 22], [30, 40], [0, 0]])


def test_gradcheck_a_wide_table():
    """A table of 3 rows of 7 (H > V), ids (4, 2) with repeats: finite differences agree."""
    rng = np.random.default_rng(0)
    table = Tensor(rng.standard_normal((3, 7)), requires_grad=True)
    ids = np.array([[0, 2], [2, 2], [1, 0], [2, 1]])
    projection = rng.standard_normal((4, 2, 7))
    assert gradcheck(lambda table: embedding(ids, table) * projection, table, names=("table",))
