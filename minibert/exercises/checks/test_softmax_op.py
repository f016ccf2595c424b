"""Exercise softmax_op (lesson 04): `SoftmaxOp.forward` in minibert/functional.py.

The op around the softmax kernel: its forward runs the kernel on x with the additive mask and saves what its
backward reads, the output y (dx = y·(dy - Σ dy·y) needs nothing else). The referee is the softmax by its
definition, and finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert import functional as F

SCORES = np.array([[1.0, 2.0, 3.0, 0.5], [-1.0, 0.0, 4.0, 2.0]])
KEEP = np.array([[True, True, False, True], [True, False, True, True]])


def test_masked_softmax_by_definition():
    """Each row: exp over the kept entries, divided by their sum; dropped entries 0."""
    e = np.where(KEEP, np.exp(SCORES), 0.0)
    want = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(F.softmax(Tensor(SCORES), mask=KEEP).data, want, rtol=1e-12, atol=1e-15,
                               err_msg="expected the softmax over the kept entries only")


def test_gradcheck_with_and_without_a_mask():
    """The backward reads what the forward saved: finite differences agree, with the mask and without."""
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((2, 4)), requires_grad=True)
    projection = rng.standard_normal((2, 4))
    assert gradcheck(lambda x: F.softmax(x, mask=KEEP) * projection, x, names=("x",))
    assert gradcheck(lambda x: F.softmax(x) * projection, x, names=("x",))
