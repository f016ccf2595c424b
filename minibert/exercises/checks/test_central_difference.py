"""Exercise central_difference (lesson 03): the numeric side of `minibert.gradcheck`.

gradcheck must accept a correct backward, catch a wrong one, and leave the inputs exactly as it found them.
"""

import numpy as np
import pytest

from minibert import Tensor, gradcheck
from minibert.autograd import Function
from minibert.errors import GradcheckError


class CubeTwiceTooSteep(Function):
    """x³ with a backward that is off by a factor of 2: the bug gradcheck exists to catch."""

    def forward(self, x):
        self.x = x
        return x ** 3

    def backward(self, grad_output):
        return grad_output * 6 * self.x ** 2  # should be 3 x²


def test_correct_backward_passes():
    """tanh(x)·x + x² with the engine's own (correct) backward passes the check."""
    x = Tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda x: (x.tanh() * x + x * x).sum(), x)


def test_wrong_backward_is_caught():
    """The factor-of-2 bug in CubeTwiceTooSteep raises GradcheckError."""
    x = Tensor(np.random.default_rng(1).standard_normal(5), requires_grad=True)
    with pytest.raises(GradcheckError):
        gradcheck(lambda x: CubeTwiceTooSteep.apply(x).sum(), x)


def test_error_shrinks_as_eps_squared():
    """For f = sum(x³) the central difference is exactly 3x² + eps² (Taylor: the eps terms cancel), so even a
    large eps of 1e-2 or 1e-3 lands within 2·eps² of the true gradient. A forward difference
    (f(x + eps) - f(x)) / eps is off by about 3x·eps, hundreds of times more."""
    x = Tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    for eps in (1e-2, 1e-3):
        assert gradcheck(lambda x: (x * x * x).sum(), x, eps=eps, atol=2 * eps**2, rtol=0.0)


def test_inputs_are_restored_exactly():
    """Perturbing x in place is fine only if every entry gets its original value back, bit for bit."""
    data = np.random.default_rng(2).standard_normal((2, 3))
    x = Tensor(data.copy(), requires_grad=True)
    gradcheck(lambda x: (x * x).sum(), x)
    np.testing.assert_array_equal(x.data, data)


def test_non_scalar_output_and_second_input():
    """A (2, 3) output and two inputs: each input's gradient is checked through the projection."""
    rng = np.random.default_rng(3)
    a = Tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = Tensor(rng.standard_normal((3,)), requires_grad=True)
    assert gradcheck(lambda a, b: (a * b).exp(), a, b)


def test_sampled_entries_are_each_compared_with_their_own_gradient():
    """With max_entries, gradcheck checks a random sample of entries (as the layers' checks do): the k-th
    sampled entry is flat[i], i = entries[k]. Perturb flat[i] and store its difference in numeric[k]. With k and
    i mixed up a correct backward fails, or numeric, which holds one slot per sample, runs out of room. The
    gradients 3x² differ at every entry, so a difference compared with another entry's gradient shows."""
    x = Tensor(np.linspace(0.5, 2.0, 30), requires_grad=True)
    try:
        gradcheck(lambda x: (x * x * x).sum(), x, max_entries=6, seed=1)
    except (IndexError, GradcheckError) as error:
        pytest.fail(f"gradcheck rejected a correct backward when it sampled 6 of 30 entries ({error}): perturb "
                    "flat[i], the sampled entry, and store its difference in numeric[k], the sample's slot")
