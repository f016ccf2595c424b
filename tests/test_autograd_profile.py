"""The opt-in op timer: it counts every op's forward and backward while on, and nothing once off."""

import numpy as np

from minibert import functional as F
from minibert.autograd import Tensor
from minibert.autograd.ops import MatMul
from minibert.fast.profile import profile_ops


def small_graph():
    x = Tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    w = Tensor(np.ones((4, 2)), requires_grad=True)
    loss = F.gelu(x @ w).sum()
    loss.backward()
    return x, w


def test_profile_counts_each_op_once_per_phase():
    """Inside profile_ops, each op of a small graph is counted once forward and once backward, with a
    non-negative time, and the table lists every op; the gradients are the same as without the timer."""
    x_plain, w_plain = small_graph()
    with profile_ops() as times:
        x, w = small_graph()
    assert set(times.ops()) == {"MatMul", "GELUOp", "Sum"}
    for name in times.ops():
        assert times.calls[(name, "forward")] == 1 and times.calls[(name, "backward")] == 1
        assert times.seconds[(name, "forward")] >= 0 and times.seconds[(name, "backward")] >= 0
        assert name in times.table()
    np.testing.assert_array_equal(x.grad, x_plain.grad)
    np.testing.assert_array_equal(w.grad, w_plain.grad)


def test_profile_is_off_outside_the_block():
    """After the block (even one left by an error) no timer is installed, and ops run after it are not
    counted."""
    forward, backward = MatMul.forward, MatMul.backward
    try:
        with profile_ops() as times:
            raise RuntimeError("leave the block early")
    except RuntimeError:
        pass
    assert (MatMul.forward, MatMul.backward) == (forward, backward)
    small_graph()
    assert times.ops() == []
