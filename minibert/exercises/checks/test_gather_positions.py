"""Exercise gather_positions (lesson 06a): `gather_positions` in minibert/model/bert.py.

The MLM head reads only the masked positions: out[b, p] = sequence_output[b, positions[b, p]]. Google's
`gather_indexes` flattens (B, S, H) to (B·S, H) and looks up row b·S + p. The referee indexes with NumPy
and checks the gradient (a scatter-add back to the rows read, twice for a position read twice).
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.model.bert import gather_positions

POSITIONS = np.array([[1, 4, 1], [0, 2, 3], [4, 4, 0]])  # (B, P): a position read twice in rows 0 and 2


def test_each_row_reads_its_own_positions():
    """(B, S, H) at (B, P) -> (B, P, H), out[b, p] = h[b, positions[b, p]], with B = 3, S = 5, P = 3."""
    h = np.random.default_rng(1).standard_normal((3, 5, 2))
    got = gather_positions(Tensor(h), POSITIONS)
    assert got.shape == (3, 3, 2), f"expected (B, P, H) = (3, 3, 2), got {got.shape}"
    want = h[np.arange(3)[:, None], POSITIONS]
    np.testing.assert_allclose(got.data, want, rtol=0, atol=0,
                               err_msg="expected row b·S + p of the flattened (B·S, H) output")


def test_gradcheck_positions_read_twice():
    """The gradient of h agrees with finite differences: rows read twice get the sum, rows never read 0."""
    rng = np.random.default_rng(2)
    h = Tensor(rng.standard_normal((3, 5, 2)), requires_grad=True)
    projection = rng.standard_normal((3, 3, 2))
    assert gradcheck(lambda h: gather_positions(h, POSITIONS) * projection, h, names=("sequence_output",))
