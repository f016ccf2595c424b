"""Exercise tanh_backward (lesson 06a): `Tanh.backward` in minibert/autograd/ops.py, the pooler's activation.

out = tanh(a)  ->  d/da = 1 - tanh(a)², computed from the output the forward saved. The referee is the
derivative by hand at a few points and finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck


def test_derivative_by_hand():
    """d tanh/da is 1 at 0 and 1 - tanh(1)² = 0.41997... at ±1, times an incoming gradient of 3."""
    a = Tensor(np.array([-1.0, 0.0, 1.0]), requires_grad=True)
    (a.tanh() * 3.0).sum().backward()
    slope = 1 - np.tanh(1.0) ** 2
    np.testing.assert_allclose(a.grad, [3 * slope, 3.0, 3 * slope], rtol=1e-12)


def test_gradcheck():
    """tanh over (3, 4) entries spread over [-3, 3]: the gradient agrees with finite differences."""
    a = Tensor(np.linspace(-3, 3, 12).reshape(3, 4), requires_grad=True)
    projection = np.random.default_rng(0).standard_normal((3, 4))
    assert gradcheck(lambda a: a.tanh() * projection, a, names=("a",))
