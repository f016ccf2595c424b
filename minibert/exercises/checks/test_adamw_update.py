"""Exercise adamw_update (lesson 11): `AdamW.update` in minibert/optim/adam.py.

Decoupled weight decay (Loshchilov & Hutter 2019): first p -= lr·wd·p, then Adam's step with bias
correction, whose gradient knows nothing of the decay. The referee is the formula in NumPy, as
torch.optim.AdamW computes it.
"""

import numpy as np

from minibert.nn.module import Parameter
from minibert.optim import AdamW


def adamw_in_numpy(param, grads, lr, weight_decay, beta1=0.9, beta2=0.999, eps=1e-8):
    m, v = np.zeros_like(param), np.zeros_like(param)
    for t, grad in enumerate(grads, start=1):
        param = param * (1 - lr * weight_decay)
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        param = param - lr * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps)
    return param


def run(weight_decay, lr=0.05, steps=3):
    rng = np.random.default_rng(0)
    start = 3 * rng.standard_normal((3, 4))
    parameter = Parameter(start.copy())
    optimizer = AdamW([parameter], lr=lr, weight_decay=weight_decay)
    grads = [rng.standard_normal(start.shape) for _ in range(steps)]
    for grad in grads:
        parameter.grad = grad.copy()
        optimizer.step()
    return parameter.data, adamw_in_numpy(start, grads, lr, weight_decay)


def test_three_steps_match_adamw():
    """With weight decay 0.2, three steps equal AdamW's formula: decay first, then the corrected step."""
    got, want = run(weight_decay=0.2)
    np.testing.assert_allclose(got, want, rtol=1e-10, err_msg="expected p -= lr·wd·p, then Adam's step")


def test_no_decay_is_adam():
    """With weight decay 0 the update is Adam's, bias correction included."""
    got, want = run(weight_decay=0.0)
    np.testing.assert_allclose(got, want, rtol=1e-10)
