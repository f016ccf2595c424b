"""Exercise optimizer_step (lesson 11): `_AdamFamily.step` in minibert/optim/adam.py.

For each parameter with a gradient: on its first step, m and v start as zeros; the step count t goes up by
one; the rule updates the parameter slice by slice (every rule is elementwise). A parameter without a
gradient is left alone. The referee is Adam's formula in NumPy over three steps.
"""

import numpy as np

from minibert.nn.module import Parameter
from minibert.optim import Adam
from minibert.optim.adam import SLICE_SIZE


def adam_in_numpy(param, grads, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    m, v = np.zeros_like(param), np.zeros_like(param)
    for t, grad in enumerate(grads, start=1):
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        param = param - lr * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps)
    return param


def test_three_steps_match_adam():
    """Three steps with different gradients: each parameter as Adam's formula says (so m and v were kept
    from step to step, and t counted 1, 2, 3)."""
    rng = np.random.default_rng(0)
    start = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    parameters = [Parameter(array.copy()) for array in start]
    optimizer = Adam(parameters, lr=0.1)
    grads = [[rng.standard_normal(array.shape) for array in start] for _ in range(3)]
    for step_grads in grads:
        for parameter, grad in zip(parameters, step_grads, strict=True):
            parameter.grad = grad.copy()
        optimizer.step()
    for index, parameter in enumerate(parameters):
        want = adam_in_numpy(start[index], [step_grads[index] for step_grads in grads], lr=0.1)
        np.testing.assert_allclose(parameter.data, want, rtol=1e-10,
                                   err_msg=f"parameter {index} after 3 steps is not Adam's")


def test_a_parameter_without_gradient_is_left_alone():
    """A parameter whose .grad is None is not updated and gets no state."""
    moving, still = Parameter(np.ones(3)), Parameter(np.ones(3))
    optimizer = Adam([moving, still], lr=0.1)
    moving.grad = np.ones(3)
    optimizer.step()
    np.testing.assert_array_equal(still.data, np.ones(3))
    assert not np.allclose(moving.data, 1.0)


def test_every_slice_of_a_large_parameter():
    """A parameter of more than SLICE_SIZE entries is updated everywhere, each entry as Adam says."""
    rng = np.random.default_rng(1)
    start = rng.standard_normal(SLICE_SIZE + 100)
    parameter = Parameter(start.copy())
    parameter.grad = rng.standard_normal(start.shape)
    Adam([parameter], lr=0.1).step()
    np.testing.assert_allclose(parameter.data, adam_in_numpy(start, [parameter.grad], lr=0.1), rtol=1e-10,
                               err_msg="some entries were not updated: go over every slice")
