"""Exercise global_grad_norm (lesson 12): `global_grad_norm` in minibert/optim/clip.py.

All gradients seen as one long vector: its length, sqrt(Σ g²) over every entry of every gradient; a
parameter whose .grad is None has no gradient and adds nothing.
"""

import math

import numpy as np

from minibert.nn.module import Parameter
from minibert.optim.clip import global_grad_norm


def with_grad(grad):
    parameter = Parameter(np.zeros(np.shape(grad)))
    parameter.grad = np.asarray(grad, dtype=np.float64)
    return parameter


def test_the_length_of_all_gradients_as_one_vector():
    """Gradients [3, 4] and [[12]] have the global norm 13 (a 3-4-5 then 5-12-13 triangle); None is skipped."""
    parameters = [with_grad([3.0, 4.0]), Parameter(np.zeros(2)), with_grad([[12.0]])]
    assert global_grad_norm(parameters) == 13.0


def test_matches_numpy_on_random_gradients():
    """On random gradients of several shapes, the norm of their concatenation."""
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(shape) for shape in ((3,), (2, 5), (4, 1, 2))]
    want = np.linalg.norm(np.concatenate([grad.ravel() for grad in grads]))
    assert math.isclose(global_grad_norm([with_grad(grad) for grad in grads]), want, rel_tol=1e-12)
