"""Exercise gelu_forward (lesson 04): `gelu_forward_numpy` in minibert/kernels/gelu.py.

GELU(x) = x·Φ(x) with Φ the standard normal CDF (Hendrycks & Gimpel 2016): exactly 0.5·x·(1 + erf(x/√2)),
or in the tanh form 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))). The referee is math.erf and math.tanh, entry
by entry, and a few values known by heart.
"""

import math

import numpy as np
import pytest

from minibert.kernels.gelu import gelu_forward_numpy

X = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 1.0, 2.5])


def test_exact_form():
    """x·Φ(x) with Φ(x) = (1 + erf(x/√2))/2, entry by entry."""
    want = [x * (1 + math.erf(x / math.sqrt(2))) / 2 for x in X]
    np.testing.assert_allclose(gelu_forward_numpy(X), want, rtol=1e-12, atol=1e-15)


def test_tanh_form():
    """0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))), entry by entry; it differs from the exact form."""
    want = [0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))) for x in X]
    got = gelu_forward_numpy(X, "tanh")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert not np.allclose(got, gelu_forward_numpy(X), rtol=1e-6, atol=0), "the tanh form is an approximation"


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_known_values(approximate):
    """GELU(0) = 0, GELU(x) ≈ x for large x, ≈ 0 for very negative x; GELU(1) = Φ(1) = 0.8413..."""
    got = gelu_forward_numpy(np.array([0.0, 8.0, -8.0, 1.0]), approximate)
    np.testing.assert_allclose(got[:3], [0.0, 8.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(got[3], 0.8413447, atol=1e-3)
