# %% [markdown]
# # Lesson 04 — the kernels: softmax, GELU, LayerNorm; Numba vs NumPy
#
# Four functions do most of BERT's work: softmax (attention weights), GELU (the feed-forward activation),
# LayerNorm (after every sublayer) and the matmul. The first three live in `minibert/kernels/` twice: a
# readable NumPy reference and a fused Numba kernel, checked against each other by the tests.
# `minibert.set_backend("numpy" | "numba")` picks which one runs. The matmul is BLAS's under both; the last
# section shows why, with a loop kernel of our own.

# %%
import time

import course
import numpy as np
from blocked_matmul import blocked_matmul

from minibert import Tensor, use_backend
from minibert import functional as F
from minibert.kernels.gelu import gelu_backward, gelu_forward
from minibert.kernels.layernorm import layer_norm_forward
from minibert.kernels.softmax import softmax_backward, softmax_forward
from minibert.viz import line_chart, line_chart_svg

# %% [markdown]
# ## Softmax and its stability trick
#
# softmax(x)_i = exp(x_i) / Σ_k exp(x_k). Written literally, exp(1000) overflows to inf and inf/inf is
# nan. Since softmax(x) = softmax(x - c) for any constant c, the kernel subtracts the row's maximum first:
# the largest term becomes exp(0) = 1, and nothing overflows.

# %%
scores = np.array([1000.0, 999.0, 990.0])
with np.errstate(over="ignore", invalid="ignore"):
    literal = np.exp(scores) / np.exp(scores).sum()
print("literal softmax of [1000, 999, 990]:", literal)
print("softmax kernel                     :", softmax_forward(scores))
print("same as softmax of [10, 9, 0]      :", softmax_forward(scores - 990))
assert np.isnan(literal).any() and np.allclose(softmax_forward(scores), softmax_forward(scores - 990))

# %% [markdown]
# Its backward needs only the output y: dy_i/dx_j = y_i(δ_ij - y_j), so
# grad_x = y ⊙ (grad_y - Σ_j grad_y_j·y_j). That is the exercise of this lesson.

# %%
y = softmax_forward(np.array([2.0, 1.0, 0.1]))
jacobian = np.diag(y) - np.outer(y, y)
grad_y = np.array([1.0, 0.0, 0.0])
print("Jacobian row-sum (softmax ignores constant shifts):", jacobian.sum(axis=1).round(12))
print("grad_x from the Jacobian:", jacobian @ grad_y)
print("grad_x from the kernel:  ", softmax_backward(grad_y, y))
assert np.allclose(jacobian.sum(axis=1), 0) and np.allclose(jacobian @ grad_y, softmax_backward(grad_y, y))

# %% [markdown]
# ## GELU vs ReLU: the negative half-axis
#
# BERT uses GELU, not ReLU. The paper says only "a gelu activation ... following OpenAI GPT" (appendix A.2),
# and OpenAI GPT's code computes the tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
# Google's `modeling.py` computed the exact GELU(x) = x·Φ(x) (Φ the normal CDF, through erf) when BERT was
# released, and moved to the tanh form later. HuggingFace names the exact one `"gelu"` and the tanh one
# `"gelu_new"`; minibert has both. The point the
# course's article makes (docs/background.md): GELU is smooth and keeps a non-zero gradient for negative
# inputs, where ReLU's is exactly 0 (a unit stuck there stops learning).

# %%
xs = np.linspace(-4, 3, 141)
ones = np.ones_like(xs)
gelu, relu = gelu_forward(xs), np.maximum(xs, 0)
dgelu, drelu = gelu_backward(ones, xs), (xs > 0).astype(float)
print(f"{'x':>6} {'gelu':>8} {'relu':>6} {'dgelu/dx':>9} {'drelu/dx':>9}")
for value in (-3.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0):
    i = int(np.argmin(abs(xs - value)))
    print(f"{xs[i]:>6.2f} {gelu[i]:>8.4f} {relu[i]:>6.2f} {dgelu[i]:>9.4f} {drelu[i]:>9.1f}")
print(line_chart({"gelu'(x)": (xs, dgelu), "relu'(x)": (xs, drelu)}, width=60, height=10,
                 title="derivatives: GELU's is non-zero for x < 0 (dips below 0 near x = -0.75)"))
course.save("04_gelu_relu.svg", line_chart_svg({"GELU": (xs, gelu), "ReLU": (xs, relu), "GELU'": (xs, dgelu),
                                                "ReLU'": (xs, drelu)}, "GELU vs ReLU", "x", "value"))
tanh_form = gelu_forward(xs, "tanh")
print(f"exact (erf) vs tanh-approximate GELU, largest gap on [-4, 3]: {abs(gelu - tanh_form).max():.1e}")
assert np.all(dgelu[xs < -0.5] != 0) and np.all(drelu[xs < 0] == 0) and abs(gelu - tanh_form).max() < 1e-3

# %% [markdown]
# ## LayerNorm
#
# Each token vector is shifted to mean 0 and scaled to variance 1 over its H features, then multiplied by a
# learned weight and shifted by a learned bias. BERT applies it after every sublayer (post-LN).

# %%
h = np.random.default_rng(0).normal(3.0, 5.0, size=(2, 8))
out, mean, rstd = layer_norm_forward(h, np.ones(8), np.zeros(8), 1e-12)
print("before: row means", h.mean(1).round(3), "row std", h.std(1).round(3))
print("after:  row means", out.mean(1).round(12), "row std", out.std(1).round(6))
print("the forward also returns mean and 1/std for the backward:", mean.round(3), rstd.round(4))
assert np.allclose(out.mean(1), 0, atol=1e-12) and np.allclose(out.std(1), 1, atol=1e-9)  # every row
assert np.allclose(out, (h - h.mean(1, keepdims=True)) / h.std(1, keepdims=True))  # by hand, weight 1, bias 0
assert np.allclose(mean, h.mean(1)) and np.allclose(rstd, 1 / h.std(1))

# %% [markdown]
# ## Dropout: the rule
#
# In training, each element is kept with probability 1 - p (BERT: p = 0.1) and the kept ones are scaled by
# 1/(1 - p), so that the expected output equals the input and evaluation needs no rescaling. As
# `F.dropout` writes it: `keep = rng.random(x.shape) >= p; y = x * keep / (1 - p)`, with the model's NumPy
# Generator. (The speed layer, minibert/fast, makes the same draws inside its fused kernels from one seed,
# so that their backward can make them again instead of storing a mask.)

# %%
ones = Tensor(np.ones(100_000))
y = F.dropout(ones, 0.1, training=True, rng=np.random.default_rng(0)).data
kept = y != 0
print(f"kept {kept.mean():.3f} of the elements, mean {y.mean():.3f}, values {np.unique(y).round(4)}")
assert abs(kept.mean() - 0.9) < 0.005 and abs(y.mean() - 1.0) < 0.01  # keep ~ 1 - p, the mean is kept

# %% [markdown]
# ## Numba vs NumPy
#
# NumPy makes one pass over memory per operation: softmax is a max, a subtract, an exp, a sum and a divide,
# five passes. The Numba kernel does one row at a time in a single fused loop, rows in parallel. The first
# call compiles (or loads the compiled code from the cache); after that, time the steady state. Timings on
# a busy machine vary a lot (parallel loops suffer first); `bench/kernel_speed.py` measures carefully, and
# docs/performance.md keeps its figures, with the machine and the date.

# %%


def best_ms(fn, repeats=5):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


rng = np.random.default_rng(0)
attention_scores = rng.standard_normal((32 * 4 * 32, 128)).astype(np.float32)  # (B·A·S', S) rows
hidden = rng.standard_normal((4096, 256)).astype(np.float32)
weight, bias = np.ones(256, np.float32), np.zeros(256, np.float32)
pre_activation = rng.standard_normal((1024, 1024)).astype(np.float32)
start = time.perf_counter()
with use_backend("numba"):
    softmax_forward(attention_scores[:2])
print(f"first Numba call (compile or cache load): {time.perf_counter() - start:.2f} s")
print(f"{'kernel':<28} {'numpy ms':>9} {'numba ms':>9}")
for name, fn in [("softmax (16384, 128)", lambda: softmax_forward(attention_scores)),
                 ("layer_norm (4096, 256)", lambda: layer_norm_forward(hidden, weight, bias, 1e-12)),
                 ("gelu (1024, 1024)", lambda: gelu_forward(pre_activation))]:
    timings = []
    for backend in ("numpy", "numba"):
        with use_backend(backend):
            timings.append(best_ms(fn))
    print(f"{name:<28} {timings[0]:>9.2f} {timings[1]:>9.2f}")

# %% [markdown]
# ## The matmul: a blocked loop kernel against BLAS
#
# c = a @ b is most of BERT's arithmetic. `lessons/blocked_matmul.py` writes it the way fast kernels are
# built: c is cut into (32, 128) tiles, each summed in an accumulator small enough to stay in the L1 cache,
# four rows of a at a time so that every value of b loaded into a register is used four times, and the
# innermost loop runs along contiguous memory so that LLVM turns it into SIMD instructions. It gives a @ b
# to float rounding, and it still loses to BLAS (OpenBLAS, behind `np.matmul`), whose assembly is blocked
# for this CPU's registers: at every size `bench/kernel_speed.py` tried (docs/performance.md; on a busy machine
# the two timings below can come out either way). So minibert sends every product to BLAS, under both
# backends; this kernel is here to read and to time.

# %%
print(f"{'(n, n) @ (n, n), float32':<28} {'loop ms':>9} {'BLAS ms':>9} {'largest gap':>12}")
for n in (64, 256):
    a, b = rng.standard_normal((2, n, n)).astype(np.float32)
    gap = abs(blocked_matmul(a, b) - a @ b).max()
    loop_ms, blas_ms = best_ms(lambda a=a, b=b: blocked_matmul(a, b)), best_ms(lambda a=a, b=b: a @ b)
    print(f"{f'n = {n}':<28} {loop_ms:>9.3f} {blas_ms:>9.3f} {gap:>12.1e}")
    assert gap < 1e-3 * n  # the same product, to float32 rounding (timings vary with the machine: not asserted)

# %% [markdown]
# **Exercise 04** (`python -m minibert.exercises start 04`): write the NumPy references
# `softmax_backward_numpy` and `layer_norm_backward_numpy`. The workspace runs on the NumPy backend, so
# `F.softmax` and `F.layer_norm` use your code, and gradcheck judges it.
