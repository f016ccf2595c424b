"""Exercise getitem_backward (lesson 06): `GetItem.backward` in minibert/autograd/ops.py.

out = a[index]: each picked entry of a receives its gradient and the rest 0. An integer array can pick an
entry twice, which then gets the sum of both (`grad[index] += g` keeps one of them: np.add.at does not).
The referee is the gradients by hand and finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck


def test_a_slice_gets_its_gradient_and_the_rest_zero():
    """x (4, 3)[1:3]: rows 1 and 2 get the gradient, rows 0 and 3 get 0 (as the position embeddings' [:S])."""
    x = Tensor(np.ones((4, 3)), requires_grad=True)
    grad = np.arange(6.0).reshape(2, 3) + 1
    x[1:3].backward(grad)
    np.testing.assert_array_equal(x.grad, np.concatenate([np.zeros((1, 3)), grad, np.zeros((1, 3))]))


def test_a_row_picked_twice_gets_the_sum():
    """x[[2, 0, 2]]: row 2 is picked twice and gets 1 + 10, row 0 gets 2, row 1 nothing."""
    x = Tensor(np.ones((3, 2)), requires_grad=True)
    x[np.array([2, 0, 2])].backward(np.array([[1.0, 1.0], [2.0, 2.0], [10.0, 10.0]]))
    np.testing.assert_array_equal(x.grad, [[2, 2], [0, 0], [11, 11]],
                                  err_msg="an entry picked twice must get the sum of both gradients")


def test_gradcheck_cls_and_a_gather():
    """h[:, 0] (the pooler's [CLS]) and h[[0, 1, 1], [2, 0, 2]] (a gather with a repeat): finite differences
    agree."""
    rng = np.random.default_rng(0)
    h = Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    first, second = rng.standard_normal((2, 4)), rng.standard_normal((3, 4))
    rows, columns = np.array([0, 1, 1]), np.array([2, 0, 2])
    assert gradcheck(lambda h: (h[:, 0] * first).sum() + (h[rows, columns] * second).sum(), h, names=("h",))
