"""Exercise scalar_backward (lesson 01): `Scalar.backward`, the walk in reverse topological order.

These graphs avoid `*` (lesson 01's other exercise), so they judge the walk alone: sums, powers and tanh.
Every expected gradient is a central finite difference of the same function.
"""

import math

import pytest

from minibert.exercises.scalar import Scalar


def numeric_grad(f, x, eps=1e-6):
    return (f(Scalar(x + eps)).data - f(Scalar(x - eps)).data) / (2 * eps)


def check(f, x):
    leaf = Scalar(x)
    f(leaf).backward()
    assert leaf.grad == pytest.approx(numeric_grad(f, x), rel=1e-5, abs=1e-7)


def test_output_gradient_is_one():
    """d y / d y = 1: backward starts the walk with the output's own gradient set to 1."""
    x = Scalar(0.3)
    y = x.tanh()
    y.backward()
    assert y.grad == 1.0
    assert x.grad == pytest.approx(1 - math.tanh(0.3) ** 2)


def test_chain_of_ops():
    """y = tanh((x + 2)^3) + x: a chain and a skip connection (at x = -1.5, where tanh is not flat, so the
    chain's share of the gradient is not lost in the skip connection's 1)."""
    check(lambda x: ((x + 2) ** 3).tanh() + x, -1.5)


def test_reused_intermediate_needs_topological_order():
    """h = x^2 feeds y twice, once directly and once through tanh(h^2). h must collect both shares before it
    passes its gradient to x; a breadth-first walk runs h's rule too early and gets the wrong answer."""
    def f(x):
        h = x ** 2
        return h + (h ** 2).tanh()
    check(f, 0.7)


def test_diamond():
    """a = x + 1 feeds b = a^2 and c = a^3, then y = b + c: two paths from y to a."""
    def f(x):
        a = x + 1
        return a ** 2 + a ** 3
    check(f, -0.3)


def test_long_chain_has_no_recursion_limit():
    """5,000 additions in a row: the walk must not recurse once per node."""
    x = Scalar(1.0)
    y = x
    for _ in range(5000):
        y = y + 1
    y.backward()
    assert x.grad == pytest.approx(1.0)
