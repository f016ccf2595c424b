"""The referee itself: gradcheck must pass right gradients and catch wrong ones."""

import numpy as np
import pytest

from minibert import Tensor, gradcheck
from minibert.autograd import Function
from minibert.errors import GradcheckError


class SquareWithForgottenFactor(Function):
    """d(a²)/da = 2a, but this backward forgets the 2: the classic bug gradcheck exists to catch."""

    def forward(self, a):
        self.a = a
        return a * a

    def backward(self, grad_output):
        return grad_output * self.a


def leaf(shape, seed=0):
    return Tensor(np.asarray(np.random.default_rng(seed).standard_normal(shape)), requires_grad=True)


def test_passes_a_correct_gradient():
    assert gradcheck(lambda x, y: (x * y).tanh(), leaf((3, 2), 1), leaf((3, 2), 2)) is True


def test_catches_a_wrong_backward_and_reports_it():
    """The report names the input, the worst entry, both values and the errors."""
    with pytest.raises(GradcheckError) as failure:
        gradcheck(lambda x: SquareWithForgottenFactor.apply(x), leaf((3, 2)), names=["weights"])
    report = str(failure.value)
    for part in ("weights", "worst entry", "analytic", "numeric", "abs error", "rel error"):
        assert part in report


def test_checks_only_inputs_that_require_grad():
    """Token ids and constants pass through unchecked."""
    ids = Tensor(np.array([0, 2]))
    assert gradcheck(lambda w, i: w[i.data], leaf((3, 2)), ids)


def test_refuses_float32_and_says_why():
    x = Tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    with pytest.raises(TypeError, match="float64"):
        gradcheck(lambda x: x * 2.0, x)


def test_needs_something_to_check():
    with pytest.raises(ValueError, match="requires_grad"):
        gradcheck(lambda x: x * 2.0, Tensor(np.ones(3)))


def test_sampling_still_catches_a_wrong_gradient():
    """With max_entries the check samples entries of a large tensor, and a wrong backward still fails."""
    with pytest.raises(GradcheckError):
        gradcheck(lambda x: SquareWithForgottenFactor.apply(x), leaf((40, 40)), max_entries=5)


def test_leaves_inputs_and_their_grads_unchanged():
    """Perturbations are undone and an earlier .grad survives, so gradcheck can run mid-experiment."""
    x = leaf((2, 3))
    before = x.data.copy()
    x.grad = np.full((2, 3), 7.0)
    gradcheck(lambda x: x.exp(), x)
    np.testing.assert_array_equal(x.data, before)
    np.testing.assert_array_equal(x.grad, 7.0)
