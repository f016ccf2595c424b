"""Exercise adam_moments (lesson 11): `update_moments` in minibert/optim/adam.py.

m = β1·m + (1-β1)·g and v = β2·v + (1-β2)·g², updated in place. Also checked through Google's BertAdam,
whose step (no bias correction) uses the moments directly.
"""

import numpy as np

from minibert.nn.module import Parameter
from minibert.optim import BertAdam
from minibert.optim.adam import update_moments


def test_one_update_in_place():
    """From m = [1, 2], v = [3, 4] and g = [10, -10]: m = 0.9·m + 0.1·g, v = 0.999·v + 0.001·g²."""
    m, v = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    m_id, v_id = id(m), id(v)
    update_moments(np.array([10.0, -10.0]), m, v, 0.9, 0.999, np.empty(2))
    np.testing.assert_allclose(m, [0.9 + 1.0, 1.8 - 1.0])
    np.testing.assert_allclose(v, [2.997 + 0.1, 3.996 + 0.1])
    assert (id(m), id(v)) == (m_id, v_id)


def test_constant_gradient_converges_to_g_and_g_squared():
    """With the same g every step, m -> g and v -> g² (geometric series: 1 - β^t of the way after t steps)."""
    m, v, g = np.zeros(3), np.zeros(3), np.array([0.5, -2.0, 3.0])
    for _ in range(50):
        update_moments(g, m, v, 0.9, 0.99, np.empty(3))
    np.testing.assert_allclose(m, (1 - 0.9**50) * g, rtol=1e-12)
    np.testing.assert_allclose(v, (1 - 0.99**50) * g * g, rtol=1e-12)


def test_bert_adam_first_two_steps_by_hand():
    """Google's rule on p = [1, -1] with grads [0.1, 0.2] then [0.3, -0.1]: p -= lr·(m/(√v + eps) + wd·p)."""
    p = Parameter(np.array([1.0, -1.0]))
    optimizer = BertAdam([p], lr=0.1, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01)
    want, m, v = p.data.copy(), np.zeros(2), np.zeros(2)
    for grad in (np.array([0.1, 0.2]), np.array([0.3, -0.1])):
        p.grad = grad
        optimizer.step()
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        want = want - 0.1 * (m / (np.sqrt(v) + 1e-6) + 0.01 * want)
        np.testing.assert_allclose(p.data, want, rtol=1e-12)
