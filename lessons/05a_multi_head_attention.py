# %% [markdown]
# # Lesson 05a — multi-head attention by hand, and why the scores are divided by √D
#
# Lesson 05 used `MultiHeadSelfAttention` (`minibert/nn/transformer.py`) as one box. Here it is opened: the
# hidden vector of H numbers is cut into A heads of D = H / A numbers, each head attends on its own slice, and
# the A results are put side by side again (Vaswani et al. 2017, §3.2.2). Then the one constant in the
# formula, 1/√D, is measured: without it the softmax saturates as D grows, and its gradient vanishes
# (§3.2.1).

# %%
import math

import course
import numpy as np

from minibert import Tensor
from minibert import functional as F
from minibert.model import build_attention_mask
from minibert.nn.transformer import MultiHeadSelfAttention
from minibert.viz import line_chart, line_chart_svg

# %% [markdown]
# ## Splitting into heads and joining back, each shape printed
#
# B = 2 sentences of S = 5 tokens, H = 12, A = 3 heads of D = 4. Head a owns the numbers [a·D, (a+1)·D) of
# every query, key and value. `split_heads` is a reshape (B, S, H) -> (B, S, A, D) and a transpose to
# (B, A, S, D), so that one batched matmul does every head at once.

# %%
B, S, H, A = 2, 5, 12, 3
D = H // A
rng = np.random.default_rng(0)
layer = MultiHeadSelfAttention(H, A, dropout_prob=0.0, rng=rng, std=0.5).to(np.float64).eval()
x = rng.standard_normal((B, S, H))
keep = build_attention_mask(np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]))  # (B, 1, 1, S): padding hidden

q = x @ layer.query.weight.data.T + layer.query.bias.data  # (B, S, H)
k = x @ layer.key.weight.data.T + layer.key.bias.data  # (B, S, H)
v = x @ layer.value.weight.data.T + layer.value.bias.data  # (B, S, H)
q_heads = q.reshape(B, S, A, D).transpose(0, 2, 1, 3)  # (B, A, S, D)
k_heads = k.reshape(B, S, A, D).transpose(0, 2, 1, 3)  # (B, A, S, D)
v_heads = v.reshape(B, S, A, D).transpose(0, 2, 1, 3)  # (B, A, S, D)
scores = q_heads @ k_heads.transpose(0, 1, 3, 2) / math.sqrt(D)  # (B, A, S, S)
scores = np.where(keep, scores, -np.inf)  # padded keys: no weight
weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
weights /= weights.sum(axis=-1, keepdims=True)  # (B, A, S, S), each row sums to 1
context_heads = weights @ v_heads  # (B, A, S, D)
context = context_heads.transpose(0, 2, 1, 3).reshape(B, S, H)  # heads side by side again: (B, S, H)
for name, array in (("x", x), ("q", q), ("q split into heads", q_heads), ("scores", scores),
                    ("context per head", context_heads), ("context joined", context)):
    print(f"{name:<20} {str(array.shape):<16}")
assert q_heads.shape == (B, A, S, D) and scores.shape == (B, A, S, S) and context.shape == (B, S, H)
assert np.allclose(q_heads[:, 1], q[:, :, D:2 * D])  # head 1 is the second slice of every query

ours, _ = layer(Tensor(x), keep)
difference = np.abs(ours.data - context).max()
print(f"largest difference from nn's MultiHeadSelfAttention: {difference:.1e}")
assert difference < 1e-12

# %% [markdown]
# Joining is the reverse: transpose back to (B, S, A, D), then merge the last two axes. Merging without the
# transpose (a plain reshape of (B, A, S, D) to (B, S, H)) runs without an error and puts numbers of other
# tokens side by side; the shapes cannot tell, only the values can:

# %%
wrong = context_heads.reshape(B, S, H)  # the heads not put back in token order
print(f"a join without the transpose differs by up to {np.abs(wrong - context).max():.2f}")
assert np.abs(wrong - context).max() > 0.1

# %% [markdown]
# ## Why √D: the softmax saturates without it
#
# A score is a dot product of D numbers. If the entries of q and k have variance 1, the score has variance
# D: with D = 64 (BERT-base) scores spread over ±8 standard units, and the softmax puts almost all the
# weight on one key. Its gradient (probs times the incoming gradient minus their weighted mean) is then
# nearly 0: the layer stops learning where it should start. Dividing by √D keeps the scores' variance at 1
# whatever D is. Measured on random q and k, 16 keys, for growing D:

# %%
def saturation(d, scale, trials=200, keys=16, seed=1):
    """(mean largest weight, mean gradient norm of the scores) of softmax(q·kᵀ·scale) over random q, k."""
    generator = np.random.default_rng(seed)
    q = Tensor(generator.standard_normal((trials, 1, d)))
    k = generator.standard_normal((trials, keys, d))
    scores = Tensor((q.data @ k.transpose(0, 2, 1)) * scale, requires_grad=True)  # (trials, 1, keys)
    probs = F.softmax(scores, axis=-1)
    (probs * generator.standard_normal(probs.shape)).sum().backward()
    return probs.data.max(axis=-1).mean(), np.linalg.norm(scores.grad, axis=-1).mean()


dims = [4, 16, 64, 256, 1024]
rows = {d: (saturation(d, 1.0), saturation(d, 1 / math.sqrt(d))) for d in dims}
print(f"{'D':>6} {'max weight, no scale':>22} {'with 1/√D':>10} {'gradient norm, no scale':>25} {'with 1/√D':>10}")
for d, ((top_plain, grad_plain), (top_scaled, grad_scaled)) in rows.items():
    print(f"{d:>6} {top_plain:>22.3f} {top_scaled:>10.3f} {grad_plain:>25.4f} {grad_scaled:>10.4f}")
print(line_chart({"no scale": (dims, [rows[d][0][1] for d in dims]),
                  "with 1/√D": (dims, [rows[d][1][1] for d in dims])}, height=8,
                 title="gradient norm of the scores against D"))
course.save("05a_sqrt_d.svg", line_chart_svg({"no scale": (dims, [rows[d][0][1] for d in dims]),
                                              "with 1/√D": (dims, [rows[d][1][1] for d in dims])},
                                             "softmax's gradient against head size D", "D", "gradient norm"))
# Without the scale the largest weight goes to 1 and the gradient to 0 as D grows; with it both stay put.
assert rows[1024][0][0] > 0.9 and rows[1024][0][1] < 0.2 * rows[4][0][1]
assert abs(rows[1024][1][0] - rows[4][1][0]) < 0.1 and rows[1024][1][1] > 0.5 * rows[4][1][1]

# %% [markdown]
# **Exercise 05a** (`python -m minibert.exercises start 05a`): write `split_heads` (`split_heads`), the reshape
# and transpose that give every head its slice. The tests compare with the slices taken one by one.
