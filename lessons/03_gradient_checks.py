# %% [markdown]
# # Lesson 03 — finite-difference gradient checks
#
# Every backward in minibert was written by hand, so every one of them can be wrong. The referee is the
# definition of the derivative: nudge an input by ±eps and watch the output,
#
#     df/dx ≈ (f(x + eps) - f(x - eps)) / (2·eps)        (central difference)
#
# `minibert.gradcheck` does this for every entry of every input and compares with the backward's answer.

# %%
import course  # noqa: F401
import numpy as np

from minibert import Tensor, gradcheck
from minibert import functional as F
from minibert.autograd import Function
from minibert.errors import GradcheckError
from minibert.nn.transformer import MultiHeadSelfAttention

# %% [markdown]
# ## Central beats forward, and float64 beats float32
#
# Taylor: f(x+e) = f + e·f' + e²/2·f'' + ..., so the one-sided difference (f(x+e) - f(x))/e is off by about
# e·f''/2, while in the central difference the e² terms cancel and the error is about e²·f'''/6. But e
# cannot shrink forever: f is rounded to about 1e-16 (float64) or 1e-7 (float32) relative, and that rounding
# is divided by e. The table shows both effects for f = tanh at x = 0.5.

# %%
exact = 1 - np.tanh(0.5) ** 2
errors = {}
print(f"{'eps':>7}  {'forward f64':>12}  {'central f64':>12}  {'central f32':>12}")
for eps in [1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-10]:
    x64, e64 = np.float64(0.5), np.float64(eps)
    forward = (np.tanh(x64 + e64) - np.tanh(x64)) / e64
    central = (np.tanh(x64 + e64) - np.tanh(x64 - e64)) / (2 * e64)
    x32, e32 = np.float32(0.5), np.float32(eps)
    central32 = (np.tanh(x32 + e32) - np.tanh(x32 - e32)) / (2 * e32)
    print(f"{eps:>7.0e}  {abs(forward - exact):>12.2e}  {abs(central - exact):>12.2e}  "
          f"{abs(float(central32) - exact):>12.2e}")
    errors[eps] = (abs(forward - exact), abs(central - exact), abs(float(central32) - exact))
print("gradcheck therefore insists on float64, with eps = 1e-6 (PyTorch's choice too).")
# central beats forward differences; float64 at eps 1e-6 is ~1e-12 off, float32 there is useless
assert errors[1e-6][1] < 1e-10 < errors[1e-6][0] and errors[1e-6][2] > 1e-3 and errors[1e-2][1] < errors[1e-2][0]

# %% [markdown]
# ## A correct backward passes...

# %%
x = Tensor(np.random.default_rng(0).standard_normal((3, 5)), requires_grad=True)
print("gradcheck(softmax):", gradcheck(lambda x: F.softmax(x) * np.arange(5.0), x))
print("gradcheck(gelu):   ", gradcheck(lambda x: F.gelu(x), x))
assert gradcheck(lambda x: F.softmax(x) * np.arange(5.0), x) and gradcheck(lambda x: F.gelu(x), x)

# %% [markdown]
# ## ...and a broken one is caught
#
# A sigmoid whose backward forgets one factor: it returns σ(x) instead of σ(x)(1 - σ(x)). Such a bug does
# not crash anything; a model trained with it simply learns worse. gradcheck names the input, the worst
# entry, and both values.

# %%


class BrokenSigmoid(Function):
    def forward(self, x):
        self.y = 1 / (1 + np.exp(-x))
        return self.y

    def backward(self, grad_output):
        return grad_output * self.y  # should be grad_output * y * (1 - y)


try:
    gradcheck(lambda x: BrokenSigmoid.apply(x), x, names=["x"])
    caught = False
except GradcheckError as error:
    print(error)
    caught = True
assert caught, "gradcheck let a wrong backward through"

# %% [markdown]
# ## A whole layer, sampled
#
# gradcheck also works on a module: it perturbs the parameters in place. (Calling ahead: attention is
# lesson 05's; here it is only a layer with many parameters, the kind every later lesson checks this way.)
# A layer has many entries, so `max_entries` samples some of each (sampled, never skipped). Here:
# multi-head attention in float64, 1 input (x) and 6 parameters (the query, key and value weights and
# biases).

# %%
attention = MultiHeadSelfAttention(8, 2, dropout_prob=0.0, rng=np.random.default_rng(1)).to(np.float64)
tokens = Tensor(np.random.default_rng(2).standard_normal((2, 3, 8)), requires_grad=True)
names, params = zip(*attention.named_parameters(), strict=True)
ok = gradcheck(lambda x, *_: attention(x)[0], tokens, *params, names=("x", *names), max_entries=10)
print("gradcheck(multi-head attention, every parameter):", ok)
assert ok

# %% [markdown]
# **Exercise 03** (`python -m minibert.exercises start 03`): write the central difference inside
# `gradcheck` (`minibert/gradient_check.py`). Its tests check that a correct backward passes, the
# factor-of-2 bug is caught, and that the inputs come back bit for bit.
