"""Exercise gelu_backward (lesson 04): `gelu_backward_numpy` in minibert/kernels/gelu.py.

GELU(x) = x·Φ(x), so dy/dx = Φ(x) + x·φ(x) (φ the normal density); the tanh form
0.5·x·(1 + tanh u), u = √(2/π)(x + 0.044715x³), differentiates through u. The referee is finite
differences of each form, at points spread over [-4, 4].
"""

import numpy as np
import pytest

from minibert import Tensor, gradcheck
from minibert import functional as F


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gradcheck_both_forms(approximate):
    """Each form's gradient agrees with finite differences of that form."""
    x = Tensor(np.linspace(-4, 4, 23).reshape(1, 23), requires_grad=True)
    projection = np.random.default_rng(0).standard_normal((1, 23))
    assert gradcheck(lambda x: F.gelu(x, approximate=approximate) * projection, x, names=("x",))
