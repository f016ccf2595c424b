"""Exercise transpose_backward (lesson 05a): `Transpose.backward` in minibert/autograd/ops.py.

out = a.transpose(axes) moves axis axes[i] to place i; the gradient goes back through the inverse
permutation. The referee is each gradient entry traced to its input entry, and finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.autograd.ops import Transpose


def test_a_cyclic_permutation_is_undone():
    """a (2, 3, 4) transposed by (1, 2, 0) is (3, 4, 2); its gradient must come back (2, 3, 4), entry
    [i, j, k] of a receiving entry [j, k, i] of the gradient. A cycle is not its own inverse."""
    op = Transpose()
    op.forward(np.zeros((2, 3, 4)), (1, 2, 0))
    grad = np.random.default_rng(0).standard_normal((3, 4, 2))
    got = op.backward(grad)
    assert got.shape == (2, 3, 4), f"expected the input's shape (2, 3, 4), got {got.shape}"
    for i, j, k in np.ndindex(2, 3, 4):
        assert got[i, j, k] == grad[j, k, i], f"entry {(i, j, k)} of a got the gradient of another entry"


def test_gradcheck_the_heads_swap():
    """(B, S, A, D) -> (B, A, S, D), as attention swaps heads and positions: finite differences agree."""
    rng = np.random.default_rng(1)
    x = Tensor(rng.standard_normal((2, 3, 2, 4)), requires_grad=True)
    projection = rng.standard_normal((2, 2, 3, 4))
    assert gradcheck(lambda x: x.transpose(0, 2, 1, 3) * projection, x, names=("x",))
