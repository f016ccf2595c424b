"""Exercise scalar_mul_rule (lesson 01): the local backward rule of `Scalar.__mul__`.

The rule is called by hand here (out.grad = 1, then out.backward_rule()), so these tests need no working
`backward()`: they judge the multiplication rule alone.
"""

import pytest

from minibert.exercises.scalar import Scalar


def run_rule(out, seed=1.0):
    out.grad = seed
    out.backward_rule()


def test_product_rule_gives_each_input_the_other_value():
    """d(a·b)/da = b and d(a·b)/db = a: for a = 3, b = -2 the gradients are -2 and 3."""
    a, b = Scalar(3.0), Scalar(-2.0)
    run_rule(a * b)
    assert a.grad == pytest.approx(-2.0)
    assert b.grad == pytest.approx(3.0)


def test_rule_scales_by_the_incoming_gradient():
    """The chain rule: with out.grad = 0.5 the inputs get 0.5·b and 0.5·a."""
    a, b = Scalar(4.0), Scalar(5.0)
    run_rule(a * b, seed=0.5)
    assert (a.grad, b.grad) == (pytest.approx(2.5), pytest.approx(2.0))


def test_rule_accumulates_so_x_times_x_gets_2x():
    """x·x uses x twice; with += the two shares add up to d(x²)/dx = 2x (with = it would be x)."""
    x = Scalar(3.0)
    run_rule(x * x)
    assert x.grad == pytest.approx(6.0)


def test_rule_adds_to_an_existing_gradient():
    """A gradient already on an input (from another use of it) is kept, not overwritten."""
    a, b = Scalar(2.0), Scalar(7.0)
    a.grad = 1.0
    run_rule(a * b)
    assert a.grad == pytest.approx(8.0)
