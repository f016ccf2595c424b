"""Exercise bias_correction (lesson 11): `bias_corrected_step` in minibert/optim/adam.py.

p -= lr·m̂/(√v̂ + eps) with m̂ = m/(1-β1^t), v̂ = v/(1-β2^t) (Kingma & Ba 2015, Algorithm 1), in place.
"""

import numpy as np

from minibert.optim.adam import bias_corrected_step


def test_step_matches_the_formula():
    """Step t = 3 from given m and v: the parameter moves by exactly lr·m̂/(√v̂ + eps)."""
    p, m, v = np.array([1.0, 2.0, -3.0]), np.array([0.1, -0.2, 0.05]), np.array([0.01, 0.04, 0.09])
    m_hat, v_hat = m / (1 - 0.9**3), v / (1 - 0.999**3)
    want = p - 0.01 * m_hat / (np.sqrt(v_hat) + 1e-8)
    bias_corrected_step(p, m, v, 3, 0.01, 0.9, 0.999, 1e-8, np.empty(3))
    np.testing.assert_allclose(p, want, rtol=1e-12)


def test_first_step_moves_every_entry_by_about_lr():
    """At t = 1, m = 0.1·g and v = 0.001·g², so m̂ = g and v̂ = g²: each entry moves by lr·sign(g), whatever
    the scale of its gradient. Without correction the first move would be 0.1/√0.001 ≈ 3.2 times larger."""
    g = np.array([1e-3, -5.0, 200.0])
    p, m, v = np.zeros(3), 0.1 * g, 0.001 * g * g
    bias_corrected_step(p, m, v, 1, 0.01, 0.9, 0.999, 1e-12, np.empty(3))
    np.testing.assert_allclose(p, -0.01 * np.sign(g), rtol=1e-6)


def test_moments_are_not_modified():
    """The step reads m and v; only p changes."""
    p, m, v = np.ones(2), np.array([0.3, 0.4]), np.array([0.5, 0.6])
    bias_corrected_step(p, m, v, 5, 0.1, 0.9, 0.999, 1e-8, np.empty(2))
    np.testing.assert_array_equal(m, [0.3, 0.4])
    np.testing.assert_array_equal(v, [0.5, 0.6])
