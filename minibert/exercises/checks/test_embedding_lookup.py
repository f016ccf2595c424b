"""Exercise embedding_lookup (lesson 06): `EmbeddingOp.forward` in minibert/nn/embedding.py.

out[..., :] = E[ids[...]]: one row of the table (V, H) per id, the ids' shape kept in front. The forward
saves what the backward needs (the ids and the table's shape). The referee is the rows picked one by one, and
finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.nn.embedding import embedding


def test_each_id_gets_its_row():
    """A table of 7 rows of 8, ids (2, 3): out (2, 3, 8), out[b, s] = E[ids[b, s]], id 0 included."""
    table = np.random.default_rng(0).standard_normal((7, 8))
    ids = np.array([[0, 4, 6], [3, 3, 1]])
    out = embedding(ids, Tensor(table)).data
    assert out.shape == (2, 3, 8), f"expected the ids' shape then H, (2, 3, 8), got {out.shape}"
    for b, s in np.ndindex(2, 3):
        np.testing.assert_array_equal(out[b, s], table[ids[b, s]], err_msg=f"position {(b, s)}: id {ids[b, s]}")


def test_gradcheck_the_table():
    """The backward reads what the forward saved: the table's gradient agrees with finite differences."""
    rng = np.random.default_rng(1)
    table = Tensor(rng.standard_normal((6, 4)), requires_grad=True)
    ids = np.array([[5, 0, 5], [2, 1, 0]])
    projection = rng.standard_normal((2, 3, 4))
    assert gradcheck(lambda table: embedding(ids, table) * projection, table, names=("table",))
