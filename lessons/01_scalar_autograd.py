# %% [markdown]
# # Lesson 01 — autograd on scalars, and why a topological order matters
#
# Training BERT means computing the gradient of one number (the loss) with respect to 110 million
# others (the weights). Nobody writes that derivative by hand: every operation records what it did, and
# the chain rule is applied backwards through that record. This lesson builds the idea at its smallest,
# one number per node, in `minibert/exercises/scalar.py` (about 100 lines). minibert's real engine,
# `minibert/autograd/tensor.py`, is the same thing with arrays.
#
# Run it: `python lessons/01_scalar_autograd.py`. Exercise: `python -m minibert.exercises start 01`.

# %%
import inspect

import course  # noqa: F401  (puts the repository on the import path)

from minibert.exercises.scalar import Scalar, naive_order, topological_order

# %% [markdown]
# ## A node remembers its inputs and a local rule
#
# `a * b` makes a new `Scalar` that keeps `(a, b)` and a `backward_rule`: given the gradient of the
# final output with respect to `a*b` (its `.grad`), add the share each input is owed. For a product,
# d(ab)/da = b, so `a` gets `b · out.grad`. Here is the rule as written in the reference:

# %%
print(inspect.getsource(Scalar.__mul__))

a, b = Scalar(3.0), Scalar(-2.0)
c = a * b
c.backward()
print(f"c = a*b = {c.data};  dc/da = {a.grad} (= b),  dc/db = {b.grad} (= a)")
assert (a.grad, b.grad) == (b.data, a.data)  # the product rule: each input gets the other's value

# %% [markdown]
# ## backward(): the rules in reverse topological order
#
# A node may feed several later nodes. Its gradient is the *sum* over all those uses (the multivariable
# chain rule), so it may only pass its gradient on once every later node has delivered its share. A
# topological order lists every node after the nodes it was computed from; walking it in reverse
# guarantees exactly that.

# %%
print(inspect.getsource(Scalar.backward))


def f(x):
    h = x * x  # h is used twice below: directly, and inside tanh
    return h + (h * h).tanh()


x = Scalar(0.7)
y = f(x)
y.backward()
eps = 1e-6
numeric = (f(Scalar(0.7 + eps)).data - f(Scalar(0.7 - eps)).data) / (2 * eps)
print("y = h + tanh(h²), h = x²,  x = 0.7")
print(f"  backward in topological order: dy/dx = {x.grad:.6f}")
print(f"  finite difference            : dy/dx = {numeric:.6f}")
assert abs(x.grad - numeric) < 1e-6

# %% [markdown]
# ## The same graph walked in the wrong order
#
# `naive_order` visits nodes breadth-first from the output. `h` is reached first through the short
# path (`y = h + ...`) and its rule runs before the long path (through `tanh(h*h)`) has added its share.
# The gradient that reaches `x` is then missing a term: nothing crashes, the number is just wrong. This is
# the bug behind micrograd issues about reused nodes, and why the tensor engine sorts topologically too.

# %%


def backward_in(order_fn, root):
    root.grad = 1.0
    for node in reversed(order_fn(root)):
        node.backward_rule()


for name, order_fn in (("topological", topological_order), ("breadth-first", naive_order)):
    x = Scalar(0.7)
    backward_in(order_fn, f(x))
    verdict = "right" if abs(x.grad - numeric) < 1e-6 else "WRONG"
    print(f"  {name:<13} order: dy/dx = {x.grad:.6f}   {verdict}")
    assert (verdict == "right") == (name == "topological")  # only the topological walk is right

# %% [markdown]
# ## Gradients accumulate
#
# Rules add with `+=`. That is what makes `x * x` give 2x, and it also means a second `backward()` adds
# to the first: clear gradients between steps (the tensor engine's `zero_grad()`).

# %%
x = Scalar(3.0)
y = x * x
y.backward()
print(f"d(x²)/dx at 3 = {x.grad}")
y2 = x * x
y2.backward()
print(f"after a second backward without clearing: {x.grad}  (6 + 6)")
assert x.grad == 12.0  # gradients accumulate

# %% [markdown]
# ## The same engine, on tensors
#
# minibert's `Tensor` does exactly this, with arrays. The walk is `_topological_order` in
# `minibert/autograd/tensor.py`, iterative like ours.

# %%
import numpy as np  # noqa: E402

from minibert import Tensor  # noqa: E402

xt = Tensor(np.array([0.7]), requires_grad=True)
ht = xt * xt
yt = (ht + (ht * ht).tanh()).sum()
yt.backward()
print(f"Tensor engine: dy/dx = {xt.grad[0]:.6f}  (scalar engine: {numeric:.6f})")
assert abs(xt.grad[0] - numeric) < 1e-6

# %% [markdown]
# **Exercise 01** (`python -m minibert.exercises start 01`): write the product rule in `Scalar.__mul__`
# (`scalar_mul_rule`) and the walk in `Scalar.backward` (`scalar_backward`), then
# `python -m minibert.exercises check 01`.
