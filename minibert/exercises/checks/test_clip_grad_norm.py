"""Exercise clip_grad_norm (lesson 12): `clip_grad_norm` in minibert/optim/clip.py.

If the global norm of all gradients exceeds max_norm, every gradient is scaled in place by max_norm/norm:
the direction is kept, the step gets shorter. At or below it, nothing changes. The norm before clipping is
returned, for the log.
"""

import numpy as np

from minibert.nn.module import Parameter
from minibert.optim import clip_grad_norm


def parameters(scale, seed=0):
    rng = np.random.default_rng(seed)
    found = []
    for shape in ((3,), (2, 4)):
        parameter = Parameter(np.zeros(shape))
        parameter.grad = scale * rng.standard_normal(shape)
        found.append(parameter)
    return found


def norm(found):
    return np.sqrt(sum(float((p.grad**2).sum()) for p in found))


def test_above_max_norm_every_gradient_is_scaled_to_it():
    """Global norm above 1: each gradient becomes g·1/norm in place (same arrays), the norm becomes 1, and the
    norm before is returned."""
    found = parameters(10.0)
    before, arrays = [p.grad.copy() for p in found], [p.grad for p in found]
    total = norm(found)
    assert np.isclose(clip_grad_norm(found, 1.0), total), "return the norm before clipping"
    for parameter, grad, array in zip(found, before, arrays, strict=True):
        np.testing.assert_allclose(parameter.grad, grad / total, rtol=1e-12,
                                   err_msg="every gradient scaled by max_norm / norm, the same factor for all")
        assert parameter.grad is array, "scale the gradients in place"
    assert np.isclose(norm(found), 1.0)


def test_at_or_below_max_norm_nothing_changes():
    """A global norm of 0.5 with max_norm 1 leaves every gradient exactly as it was."""
    found = parameters(1.0)
    scale = 0.5 / norm(found)
    for parameter in found:
        parameter.grad *= scale
    before = [p.grad.copy() for p in found]
    assert np.isclose(clip_grad_norm(found, 1.0), 0.5)
    for parameter, grad in zip(found, before, strict=True):
        np.testing.assert_array_equal(parameter.grad, grad, err_msg="below max_norm the gradient is kept")
