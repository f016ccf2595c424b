# %% [markdown]
# # Lesson 05b — the rest of an encoder layer: feed-forward, residual, post-LN, and its parameters
#
# After attention (lessons 05 and 05a), each BERT layer has a position-wise feed-forward network, and both
# sublayers end the same way, "post-LN" (Vaswani et al. 2017, §3.1 and §3.3; BERT keeps it):
#
#     x = LayerNorm(x + Dropout(Dense(Attention(x))))
#     x = LayerNorm(x + Dropout(W₂·GELU(W₁·x + b₁) + b₂))
#
# `minibert/nn/transformer.py` holds the three pieces (`MultiHeadSelfAttention`, `FeedForward`,
# `SublayerOutput`) and `minibert/model/bert.py` stacks them (`EncoderLayer`, `Encoder`). This lesson measures
# why each piece is there, then counts the parameters of a whole BERT by hand.

# %%
import course
import numpy as np

from minibert import Tensor
from minibert import functional as F
from minibert.config import BertConfig
from minibert.model import BertForPreTraining
from minibert.model.bert import EncoderLayer
from minibert.model.memory import count_parameters
from minibert.nn.module import ModuleList
from minibert.nn.transformer import FeedForward, SublayerOutput
from minibert.viz import line_chart, line_chart_svg

# %% [markdown]
# ## The feed-forward block and its activation
#
# FFN widens each token's vector from H to I = 4·H, applies GELU, and narrows it back: every token on its own,
# the same weights for every position. GELU(x) = x·Φ(x) is ReLU made smooth: it lets a little of the negative
# half through, so a unit there still gets a gradient. Google's `modeling.py` computed it exactly (with erf)
# when BERT was released and with OpenAI GPT's tanh approximation later; the two differ by less than a
# thousandth:

# %%
xs = np.linspace(-4.0, 3.0, 141)
exact = F.gelu(Tensor(xs)).data
tanh_form = F.gelu(Tensor(xs), approximate="tanh").data
relu = np.maximum(xs, 0.0)
curves = {"GELU": (xs, exact), "tanh GELU": (xs, tanh_form), "ReLU": (xs, relu)}
print(line_chart(curves, height=10, title="GELU, its tanh form, ReLU"))
course.save("05b_gelu_relu.svg", line_chart_svg(curves, "activations of the feed-forward block", "x", "f(x)"))
gap = np.abs(exact - tanh_form).max()
print(f"largest |GELU - tanh GELU| on [-4, 3]: {gap:.1e}; GELU(-1) = {exact[60]:.4f} where ReLU(-1) = 0")
assert 1e-5 < gap < 1e-3 and exact[60] < -0.15  # x = -1 is xs[60]

H, I = 16, 64
rng = np.random.default_rng(0)
feed_forward, ends = FeedForward(H, I, "gelu", rng), SublayerOutput(I, H, 0.0, 1e-12, rng)
x = Tensor(rng.standard_normal((2, 5, H)).astype(np.float32))
wide = feed_forward(x)  # (B, S, H) -> (B, S, I)
out = ends(wide, residual=x)  # (B, S, I) -> (B, S, H), then + x and LayerNorm
print(f"x {x.shape} -> W₁, GELU {wide.shape} -> W₂, + x, LayerNorm {out.shape}")
assert wide.shape == (2, 5, I) and out.shape == (2, 5, H)
assert np.allclose(out.data.mean(-1), 0, atol=1e-5) and np.allclose(out.data.std(-1), 1, atol=1e-3)  # post-LN

# %% [markdown]
# ## Why the residual: a deep stack without it forgets its input
#
# 24 of the library's own `EncoderLayer`s (H = 32, 4 heads, BERT's initial std 0.02, no dropout), three ways:
# post-LN, the layer's own forward, as BERT runs it; the same pieces and weights with the residual taken out
# (each sublayer ends LayerNorm(Dense(h)): `SublayerOutput` given a residual of zeros); and "pre-LN"
# (x + Dense(sublayer(LayerNorm(x))), GPT-2 onwards), the same pieces rearranged. For each, how much of the
# input survives to the output (their correlation), and the gradient norm reaching each layer's feed-forward
# weights from a loss on the output.

# %%
def run_layer(layer, x, kind):
    """One `EncoderLayer` on x (B, S, H): its own forward for post-LN, its pieces rearranged for the others."""
    attention, feed_forward_end = layer.attention.output, layer.output  # the two SublayerOutputs
    if kind == "post-LN":
        return layer(x, None)[0]
    if kind == "no residual":
        zeros = Tensor(np.zeros(x.shape))
        x = attention(layer.attention.self(x, None)[0], residual=zeros)
        return feed_forward_end(layer.intermediate(x), residual=zeros)
    x = x + attention.dense(layer.attention.self(attention.LayerNorm(x), None)[0])  # pre-LN
    return x + feed_forward_end.dense(layer.intermediate(feed_forward_end.LayerNorm(x)))


def stack(kind, std=0.02, layers=24, hidden=32):
    """(correlation of output with input, gradient norm per layer, std of the hidden state after each layer)."""
    config = BertConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=4,
                        intermediate_size=4 * hidden, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                        initializer_range=std)
    generator = np.random.default_rng(0)
    encoder = ModuleList([EncoderLayer(config, generator) for _ in range(layers)]).to(np.float64)
    x0 = Tensor(generator.standard_normal((8, 16, hidden)))
    x, spread = x0, []
    for layer in encoder:
        x = run_layer(layer, x, kind)
        spread.append(float(x.data.std()))
    (x * generator.standard_normal(x.shape)).sum().backward()
    survives = np.corrcoef(x.data.ravel(), x0.data.ravel())[0, 1]
    return survives, [float(np.linalg.norm(layer.intermediate.dense.weight.grad)) for layer in encoder], spread


results = {kind: stack(kind) for kind in ("post-LN", "no residual", "pre-LN")}
print(f"{'':<12} {'input in output':>16} {'grad norm, layer 1':>19} {'layer 24':>9} {'max/min over layers':>20}")
for kind, (survives, grads, _) in results.items():
    print(f"{kind:<12} {survives:>16.3f} {grads[0]:>19.1f} {grads[-1]:>9.1f} {max(grads) / min(grads):>20.2f}")
layers = list(range(1, 25))
course.save("05b_gradients_per_layer.svg", line_chart_svg(
    {kind: (layers, grads) for kind, (_, grads, _) in results.items()},
    "gradient norm per layer, 24 encoder layers", "layer", "gradient norm"))
post, none, pre = results["post-LN"], results["no residual"], results["pre-LN"]
# the residual carries the input through; without it, 24 layers leave nothing of it and the gradients swell
assert post[0] > 0.9 and pre[0] > 0.9 and abs(none[0]) < 0.1
assert min(none[1]) > 10 * max(post[1]) and max(post[1]) / min(post[1]) < 1.2

# %% [markdown]
# Post-LN and pre-LN both keep the input. Where they differ is the size of what flows between layers: post-LN
# normalises after every residual sum, so each layer hands on a vector of std 1; pre-LN adds every sublayer's
# output to a stream that is never normalised, so it grows with depth (measured with std 0.1, where the
# sublayers' outputs are large enough to see it). BERT's checkpoints assume post-LN; a pre-LN model needs
# a LayerNorm at the very end instead.

# %%
post_spread, pre_spread = stack("post-LN", std=0.1)[2], stack("pre-LN", std=0.1)[2]
print(f"std of the hidden state after layers 1, 12, 24: post-LN {post_spread[0]:.2f} {post_spread[11]:.2f} "
      f"{post_spread[23]:.2f}; pre-LN {pre_spread[0]:.2f} {pre_spread[11]:.2f} {pre_spread[23]:.2f}")
assert all(abs(value - 1) < 1e-3 for value in post_spread) and pre_spread[23] > 1.2 * pre_spread[0]

# %% [markdown]
# ## The assembled model, counted by hand
#
# One encoder layer: q, k, v and the output projection (four H x H weights and four biases), the feed-forward
# (H x I and I x H, with biases I and H), two LayerNorms (2·H each). The embeddings (lesson 06, next; here
# only counted): V + P + 2 rows of H, and their LayerNorm. On top, the pooler (H x H + H), the MLM head's
# transform (H x H + H, a LayerNorm) and its own bias V (its decoder is the word-embedding matrix itself:
# lesson 06a), and NSP's Linear(H, 2).

# %%
def by_hand(V, H, L, I, P, segments=2):
    layer = 4 * (H * H + H) + (H * I + I) + (I * H + H) + 2 * 2 * H
    embeddings = (V + P + segments) * H + 2 * H
    heads = (H * H + H) + (H * H + H + 2 * H + V) + (H * 2 + 2)  # pooler; MLM transform, bias; NSP
    return embeddings + L * layer + heads


mini = BertConfig.preset("mini", vocab_size=8192)
base = BertConfig.preset("base")
ours = by_hand(8192, 256, 4, 1024, 512)
built = BertForPreTraining(mini).num_parameters()
print(f"mini: by hand {ours:,}; the model built: {built:,}")
base_by_hand = by_hand(30522, 768, 12, 3072, 512)
print(f"BERT-base from its config: by hand {base_by_hand:,} ({base_by_hand / 1e6:.1f}M; the paper: 110M); "
      f"minibert's own count (model/memory.py): {count_parameters(base):,}")
print(f"of which one encoder layer: {4 * (768 * 768 + 768) + 2 * 768 * 3072 + 3072 + 768 + 4 * 768:,}, and the "
      f"word embeddings {30522 * 768:,} ({30522 * 768 / base_by_hand:.0%})")
assert ours == built and base_by_hand == count_parameters(base) and round(base_by_hand / 1e6) == 110

# %% [markdown]
# **Exercise 05b** (`python -m minibert.exercises start 05b`): write `SublayerOutput.forward`
# (`sublayer_output`), post-LN's end of a sublayer. The tests catch a residual added after the norm, a
# missing residual, dropout in the wrong place (after the norm, over the residual stream) and dropout at
# evaluation time.
