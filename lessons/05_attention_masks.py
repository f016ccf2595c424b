# %% [markdown]
# # Lesson 05 — attention and masks: GPT vs BERT is one mask
#
# The central claim of the article the course follows (docs/background.md): GPT and BERT are the same
# Transformer; the only architectural difference is the attention mask. GPT uses a **causal** mask (token i
# sees tokens 0..i); BERT uses none (every token sees every token), which is why it needs the [MASK] trick
# of lesson 08.
#
# In minibert the mask is built in one place, `build_attention_mask` (`minibert/model/masks.py`), and
# `BertConfig(attention="causal")` turns BERT into a GPT-style encoder with nothing else changed.

# %%
import course
import numpy as np

from minibert import Tensor
from minibert.model import build_attention_mask, mask_matrix
from minibert.nn.transformer import MultiHeadSelfAttention
from minibert.viz import heatmap, heatmap_svg, mask_grid

TOKENS = "我 喜欢 猫 睡 在 沙发 上".split()

# %% [markdown]
# ## The two 0/1 matrices, as the article draws them
#
# Row i is the query (the token doing the looking), column j the key (the token looked at).

# %%
print("GPT (causal mask):")
print(mask_grid(mask_matrix(len(TOKENS), "causal"), TOKENS))
print("\nBERT (bidirectional):")
print(mask_grid(mask_matrix(len(TOKENS), "bidirectional"), TOKENS))
assert (mask_matrix(7, "causal") == np.tri(7, dtype=int)).all() and mask_matrix(7, "bidirectional").all()
course.save("05_causal_mask.svg", heatmap_svg(mask_matrix(7, "causal"), TOKENS, TOKENS, "causal mask (GPT)"))
course.save("05_bidirectional_mask.svg", heatmap_svg(mask_matrix(7, "bidirectional"), TOKENS, TOKENS,
                                                     "bidirectional mask (BERT)", value_range=(0, 1)))

# %% [markdown]
# Padding is hidden the same way: a batch pads short sequences with [PAD], `attention_mask` is 0 there,
# and no query may look at a padded key. The model builds a (B, 1, 1, S) mask for BERT (one row, shared by
# all queries and heads) and (B, 1, S, S) for the causal model.

# %%
padded = np.array([[1, 1, 1, 1, 1, 0, 0]])  # 5 real tokens, 2 [PAD]
print("bidirectional with padding:", build_attention_mask(padded).shape)
print(mask_grid(mask_matrix(7, "bidirectional", padded[0]), TOKENS[:5] + ["[PAD]", "[PAD]"]))

# %% [markdown]
# ## Attention itself: softmax(q·kᵀ/√D + mask)·v
#
# Each token makes a query, a key and a value (three Linear layers). A masked score gets a huge negative
# number added before the softmax, so its weight is exactly 0. Here is one random attention layer, the same
# weights under both masks: every row sums to 1 over the keys it may see.

# %%
rng = np.random.default_rng(0)
attention = MultiHeadSelfAttention(16, 2, dropout_prob=0.0, rng=rng, std=0.5)
x = Tensor(rng.standard_normal((1, 7, 16)).astype(np.float32))
for kind in ("causal", "bidirectional"):
    mask = build_attention_mask(np.ones((1, 7), dtype=np.int64), kind)
    _, probs = attention(x, mask)
    print(heatmap(probs.data[0, 0], TOKENS, TOKENS, title=f"{kind}: head 0 weights", value_range=(0, 1)))
    assert np.allclose(probs.data.sum(-1), 1, atol=1e-6)  # every row sums to 1 over the keys it may see
    assert kind == "bidirectional" or not np.triu(probs.data[0, 0], k=1).any()  # causal: nothing right of i
    course.save(f"05_attention_{kind}.svg", heatmap_svg(probs.data[0, 0], TOKENS, TOKENS,
                                                        f"{kind} attention, head 0", value_range=(0, 1)))

# %% [markdown]
# ## Which outputs change when a later token changes?
#
# Give each word a vector of its own, replace 沙发 (sofa, position 5) by another word, and run two attention
# layers, one on top of the other, as a model stacks its layers (lessons 05b and 06 fill in the rest of a
# layer and the real word vectors). With the causal mask, positions 0-4 cannot see position 5, so their
# outputs do not move at all, however many layers there are: the blank in the article's `小明给小红 ___ 一本书`
# cannot see 书. With BERT's mask every output changes.

# %%
word_vectors = rng.standard_normal((20, 16)).astype(np.float32)  # one made-up vector per word id
ids = np.array([[10, 11, 12, 13, 14, 15, 16]])  # 我 喜欢 猫 睡 在 沙发 上
changed = ids.copy()
changed[0, 5] = 17  # 沙发 -> another word
layers = [MultiHeadSelfAttention(16, 2, dropout_prob=0.0, rng=rng, std=0.5) for _ in range(2)]


def two_layers(word_ids, mask):
    """The first layer's outputs are the second one's inputs: what position i reads, it passes on to i."""
    h = Tensor(word_vectors[word_ids])  # (1, 7, 16)
    for layer in layers:
        h = layer(h, mask)[0]  # (1, 7, 16)
    return h.data[0]


for kind in ("causal", "bidirectional"):
    mask = build_attention_mask(np.ones((1, 7), dtype=np.int64), kind)
    moved = np.abs(two_layers(changed, mask) - two_layers(ids, mask)).max(axis=1)
    print(f"{kind:>13}: " + "  ".join(f"{token}:{'changed' if m > 0 else 'same'}" for token, m in
                                      zip(TOKENS, moved, strict=True)))
    # causal: only 沙发 and what comes after it move; bidirectional: every output moves
    assert (moved > 0).tolist() == ([False] * 5 + [True] * 2 if kind == "causal" else [True] * 7)

# %% [markdown]
# **Exercise 05** (`python -m minibert.exercises start 05`): write `build_attention_mask` (`attention_mask`)
# and the forward pass of `MultiHeadSelfAttention` (`attention_forward`), all heads at once with no Python
# loop over heads. The tests compare with attention written one head and one query at a time, and also
# give the layer other tokens to ask (`asking`, Google's `from_tensor`): q comes from them, k and v from x.
# What runs here, and in your debugger, is that `forward`: the layer has no other body. For speed, the
# training commands call `minibert.fast.accelerate(model)`, which swaps in a fused twin of the layer (q, k and
# v from one Linear, then one fused op) with the same parameters and the same numbers.
