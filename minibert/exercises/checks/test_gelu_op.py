"""Exercise gelu_op (lesson 04): `GELUOp.forward` in minibert/functional.py.

The op around the GELU kernel: its forward runs the kernel in the form asked ("none", exact, or "tanh") and
saves what its backward reads, the input x (not the output) and the form. The referee is math.erf and
math.tanh entry by entry, and finite differences of each form.
"""

import math

import numpy as np
import pytest

from minibert import Tensor, gradcheck
from minibert import functional as F

X = np.array([[-2.5, -0.5, 0.0, 0.75, 3.0]])


def test_values_of_both_forms():
    """F.gelu in each form equals x·Φ(x) with erf, or the tanh approximation, entry by entry."""
    exact = [x * (1 + math.erf(x / math.sqrt(2))) / 2 for x in X[0]]
    tanh = [0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))) for x in X[0]]
    np.testing.assert_allclose(F.gelu(Tensor(X)).data[0], exact, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(F.gelu(Tensor(X), approximate="tanh").data[0], tanh, rtol=1e-12, atol=1e-15,
                               err_msg="approximate='tanh' must reach the kernel")


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gradcheck_both_forms(approximate):
    """The backward reads what the forward saved: each form's gradient agrees with finite differences."""
    x = Tensor(np.linspace(-3, 3, 13).reshape(1, 13), requires_grad=True)
    projection = np.random.default_rng(0).standard_normal((1, 13))
    assert gradcheck(lambda x: F.gelu(x, approximate=approximate) * projection, x, names=("x",))
