# %% [markdown]
# # Lesson 10 — the MLM loss vs GPT's shifted loss
#
# The pseudo-code of the course's article (docs/background.md), side by side:
#
#     # BERT: the loss only at the chosen (masked) positions
#     loss = sum(w · cross_entropy(logits, target_ids)) / (sum(w) + 1e-5)     # w = 1 where chosen, else 0
#     # GPT: every position predicts the next token
#     loss = cross_entropy(logits[:, :-1, :], input_ids[:, 1:])
#
# How many positions carry gradient in each? Count them.

# %%
import math

import course
import numpy as np

from minibert import Tensor, fast
from minibert.data import MaskingConfig, SpecialTokens, create_masked_lm_predictions
from minibert.model import BertConfig, BertForPreTraining, causal_lm_loss, pretraining_loss
from minibert.model.losses import cross_entropy
from minibert.tokenizer import BertTokenizer
from minibert.viz import heatmap, heatmap_svg

tokenizer = BertTokenizer(course.ROOT / "data" / "synthetic" / "vocab.txt")
special = SpecialTokens.from_tokenizer(tokenizer)
config = BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size)

text = "On Monday, Ethan and Chloe went to the lake and Chloe asked Ethan for a glass of juice."
ids = np.array(tokenizer.encode(text)["input_ids"])
rng = np.random.default_rng(0)
masked = create_masked_lm_predictions(ids, None, rng, special, MaskingConfig(whole_word=False))
seq_len = len(ids)
print(f"{seq_len} tokens, {len(masked.positions)} chosen for MLM at {masked.positions.tolist()}")

# %% [markdown]
# ## Gradient at every position: run the MLM head on all S positions
#
# (For counting only. The real model runs the head on the P chosen positions alone, Google's
# `gather_indexes`, which saves most of the (·, H) @ (H, V) matmul.)

# %%
# Only leaves keep a .grad, so each loss is taken on a leaf copy of the logits (S, V).
model = BertForPreTraining(config, seed=0).eval()
logits = Tensor(model(masked.input_ids[None]).mlm_logits.data, requires_grad=True)  # no masked_positions
weights = np.zeros((1, seq_len))
weights[0, masked.positions] = 1.0  # mask_weights: 1 where chosen
cross_entropy(logits, ids[None], weights=weights).backward()
bert_rows = np.abs(logits.grad[0]).sum(-1) > 0  # (S,): which positions got gradient

causal_logits = Tensor(model(ids[None], attention="causal").mlm_logits.data, requires_grad=True)
causal_lm_loss(causal_logits, ids[None]).backward()
gpt_rows = np.abs(causal_logits.grad[0]).sum(-1) > 0

tokens = tokenizer.convert_ids_to_tokens(ids)
grid = np.stack([bert_rows, gpt_rows]).astype(float)
print(heatmap(grid, ["BERT MLM", "GPT next"], tokens, "positions whose logits receive gradient",
              value_range=(0, 1)))
course.save("10_gradient_positions.svg", heatmap_svg(grid, ["BERT MLM", "GPT next"], tokens,
                                                     "positions that carry gradient", value_range=(0, 1)))
print(f"BERT: {bert_rows.sum()} of {seq_len} positions ({bert_rows.mean():.0%});  "
      f"GPT: {gpt_rows.sum()} of {seq_len} (every one but the last)")
assert bert_rows.sum() == len(masked.positions) and gpt_rows.sum() == seq_len - 1

# %% [markdown]
# BERT gets a learning signal from about 15% of the positions per pass, GPT from all of them: MLM pays for
# bidirectionality with fewer predictions per sequence (which is why ELECTRA later trained on every token).
# All S positions still take part in attention, so every position's *representation* gets gradient in
# both; only the prediction targets differ.

# %% [markdown]
# ## What the loss should be before training
#
# An untrained model spreads probability evenly over the V tokens, so its loss is about ln V. A loss stuck
# there after training means the labels never reach the loss (a classic padding or ignore-index bug).

# %%
positions = masked.positions[None]
output = model(masked.input_ids[None], masked_positions=positions)
total, mlm, nsp = pretraining_loss(output, masked.labels[None], np.ones_like(positions, dtype=np.float32),
                                   np.array([0]))
ln_v = math.log(config.vocab_size)
print(f"MLM loss at init {mlm.item():.3f}  vs ln V = {ln_v:.3f} (V = {config.vocab_size})")
print(f"NSP loss at init {nsp.item():.3f}  vs ln 2 = {math.log(2):.3f}")
print(f"total = MLM + NSP = {total.item():.3f}")
# an untrained head is about uniform: the losses start near ln V and ln 2, and add up
assert abs(mlm.item() - ln_v) < 0.5 and abs(nsp.item() - math.log(2)) < 0.1
assert abs(total.item() - mlm.item() - nsp.item()) < 1e-5

# %% [markdown]
# The weights w also make padding harmless: sequences have up to `max_predictions_per_seq` (20) slots,
# and unused slots carry w = 0, so they add nothing to the sum and nothing to its gradient.

# %%
padded_positions = np.concatenate([positions, np.zeros((1, 2), np.int64)], axis=1)  # two empty slots
padded_labels = np.concatenate([masked.labels[None], np.zeros((1, 2), np.int64)], axis=1)
padded_weights = np.concatenate([np.ones_like(positions), np.zeros((1, 2), np.int64)], axis=1)
padded_output = model(masked.input_ids[None], masked_positions=padded_positions)
_, padded_mlm, _ = pretraining_loss(padded_output, padded_labels, padded_weights, np.array([0]))
print(f"MLM loss with two padded slots: {padded_mlm.item():.6f} (without: {mlm.item():.6f})")
assert abs(padded_mlm.item() - mlm.item()) < 1e-5  # a slot of weight 0 changes nothing

# %% [markdown]
# ## The last layer needs only the rows the loss reads
#
# The MLM head reads the last layer's vectors at the chosen positions, the NSP head reads [CLS], and no
# other token reads a last-layer output (there is no layer above). So the last layer can compute its
# queries, attention, feed-forward and LayerNorms for those 1 + P rows only; every token still supplies
# its key and value. Same loss, same gradients, less work: the `pretrain` command runs the model this way,
# through the speed layer (`minibert.fast.accelerate(model, prune_last_layer=True)`; see minibert/fast),
# whose encoder gives its last layer only those rows as the tokens that ask (`asking` in
# `MultiHeadSelfAttention.forward`, Google's `from_tensor`). The last layer's attention weights show it:
# one row per token that asked.

# %%
pruned_model = fast.accelerate(BertForPreTraining(config, seed=0).eval(), prune_last_layer=True)  # model's weights
pruned = pruned_model(masked.input_ids[None], masked_positions=positions, output_attentions=True)
_, pruned_mlm, _ = pretraining_loss(pruned, masked.labels[None], np.ones_like(positions, dtype=np.float32),
                                    np.array([0]))
print(f"last layer on {pruned.attentions[-1].shape[2]} of {seq_len} rows ([CLS] + {positions.shape[1]} "
      f"chosen): MLM loss {pruned_mlm.item():.6f} (every row: {mlm.item():.6f})")
assert pruned.attentions[-1].shape[2] == 1 + positions.shape[1]
assert abs(pruned_mlm.item() - mlm.item()) < 1e-5

# %% [markdown]
# Why must the chosen tokens be hidden at all? A model that could see its answers would learn to copy them;
# lesson 11 trains one, once it has the optimizer to do it with.

# %% [markdown]
# **Exercise 10** (`python -m minibert.exercises start 10`): write `pretraining_loss` (`mlm_loss`) and
# `causal_lm_loss`. The tests compare with NumPy and check which logits get a zero gradient.
