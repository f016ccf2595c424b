"""Exercise zero_grad (lesson 11): `Optimizer.zero_grad` in minibert/optim/optimizer.py.

Gradients accumulate across backward passes, so each step starts by forgetting them: every parameter of
every group gets .grad = None (PyTorch's default), or, with set_to_none=False, its gradient array filled with
zeros in place (a parameter without a gradient keeps None).
"""

import numpy as np

from minibert.nn.module import Parameter
from minibert.optim import Adam


def optimizer_of_two_groups():
    params = [Parameter(np.ones(2)), Parameter(np.ones(3)), Parameter(np.ones(4))]
    optimizer = Adam([{"params": params[:2], "lr": 0.1}, {"params": params[2:], "lr": 0.01}])
    for param in params:
        param.grad = np.full(param.shape, 5.0)
    return optimizer, params


def test_every_gradient_becomes_none():
    """Three parameters in two groups: after zero_grad() every .grad is None."""
    optimizer, params = optimizer_of_two_groups()
    optimizer.zero_grad()
    still = [index for index, param in enumerate(params) if param.grad is not None]
    assert not still, f"parameters {still} still hold a gradient"


def test_zeros_in_place_when_asked():
    """set_to_none=False: each gradient is the same array, now all zeros; a None gradient stays None."""
    optimizer, params = optimizer_of_two_groups()
    params[1].grad = None
    arrays = [params[0].grad, params[2].grad]
    optimizer.zero_grad(set_to_none=False)
    assert params[1].grad is None, "a parameter without a gradient must keep None"
    for param, array in zip((params[0], params[2]), arrays, strict=True):
        assert param.grad is array, "fill the gradient with zeros in place, do not replace it"
        np.testing.assert_array_equal(param.grad, np.zeros(param.shape))
