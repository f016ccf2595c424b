# %% [markdown]
# # Lesson 02 — tensors, broadcasting and `unbroadcast`
#
# Lesson 01's engine had one number per node. BERT's nodes are arrays: a batch of hidden states is
# (B, S, H) = (32, 128, 256). `minibert.Tensor` wraps a NumPy array and records the op that made it, exactly
# as `Scalar` did. One new question comes with arrays: **broadcasting**. Adding a bias of shape (H,) to
# activations of shape (B, S, H) silently copies the bias B·S times. The backward pass must undo that
# copy, and the undoing of a copy is a **sum**. That sum is `unbroadcast`, the one place in minibert where
# broadcasting is undone.

# %%
import course  # noqa: F401
import numpy as np

from minibert import Tensor
from minibert.autograd import Function, unbroadcast
from minibert.errors import ShapeError

# %% [markdown]
# ## A bias added to every row

# %%
x = Tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)  # 3 tokens, hidden size 4
bias = Tensor(np.array([0.1, 0.2, 0.3, 0.4]), requires_grad=True)  # one bias per feature
y = x + bias  # (3, 4) + (4,) -> (3, 4): the bias row is used by every token
loss = (y * y).sum()
loss.backward()
print("x + bias:\n", y.data)
print("dloss/dy = 2y, shape", (2 * y.data).shape)
print("bias.grad (shape", bias.grad.shape, "):", bias.grad)
print("the column sums of 2y:             ", (2 * y.data).sum(axis=0))
assert np.allclose(bias.grad, (2 * y.data).sum(axis=0))  # a bias used by every row: the sum of their gradients

# %% [markdown]
# Each bias entry was used 3 times (once per row), so its gradient is the sum of the 3 gradients it
# received. In general: sum over the leading axes that broadcasting added, and over every axis where the
# original shape had a 1 (keeping that axis).

# %%
g = np.ones((2, 3, 4))
for shape in [(2, 3, 4), (3, 4), (4,), (3, 1), (1, 1, 4), ()]:
    print(f"unbroadcast(ones(2, 3, 4), {str(shape):<10}) -> shape {str(np.shape(unbroadcast(g, shape))):<10}"
          f" values {np.unique(unbroadcast(g, shape))}  (how many times each entry was used)")

# %% [markdown]
# ## Why it is the *adjoint*
#
# Broadcasting is a linear map B from the small shape to the big one. Its backward is the transpose
# Bᵀ, defined by ⟨Bᵀg, x⟩ = ⟨g, Bx⟩ for every x and g. Check that numerically: this identity is exactly what
# the exercise's tests use as referee.

# %%
rng = np.random.default_rng(0)
g, small = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 1))
left = np.sum(unbroadcast(g, small.shape) * small)
right = np.sum(g * np.broadcast_to(small, g.shape))
print(f"<unbroadcast(g), x> = {left:.12f}\n<g, broadcast(x)>   = {right:.12f}")
assert abs(left - right) < 1e-12  # unbroadcast is the adjoint of broadcasting

# %% [markdown]
# ## What happens if a backward forgets
#
# Here is an addition whose backward returns the gradient unchanged. For the bias that gradient is
# (3, 4), not (4,). minibert's engine checks every gradient's shape against its tensor (as tinygrad's
# does), so the mistake is caught at once instead of corrupting the update.

# %%


class ForgetfulAdd(Function):
    def forward(self, a, b):
        return a + b

    def backward(self, grad_output):
        return grad_output, grad_output  # wrong for a broadcast input


caught = False
try:
    ForgetfulAdd.apply(x, bias).sum().backward()
except ShapeError as error:
    print("caught:", error)
    caught = True
assert caught, "the engine let a gradient of the wrong shape through"

# %% [markdown]
# ## Matmul broadcasts too
#
# `x @ W` with x (B, S, H) and W (H, H) folds B·S rows into one matrix product. The weight is shared by
# every row, so its gradient sums over all of them: (B·S, H)ᵀ @ (B·S, H).

# %%
xb = Tensor(rng.standard_normal((2, 5, 4)), requires_grad=True)
w = Tensor(rng.standard_normal((4, 3)), requires_grad=True)
(xb @ w).sum().backward()
print("w.grad shape", w.grad.shape, "equals the sum of x over all 10 rows, repeated:",
      np.allclose(w.grad, xb.data.reshape(-1, 4).sum(0)[:, None].repeat(3, 1)))
assert w.grad.shape == (4, 3) and np.allclose(w.grad, xb.data.reshape(-1, 4).sum(0)[:, None].repeat(3, 1))

# %% [markdown]
# **Exercise 02** (`python -m minibert.exercises start 02`): write `unbroadcast`
# (`minibert/autograd/tensor.py`). Every op's backward in the engine goes through it, so the tests
# gradcheck broadcasting ops as well.
