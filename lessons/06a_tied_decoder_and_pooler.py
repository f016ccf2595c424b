# %% [markdown]
# # Lesson 06a — the heads on top: the MLM decoder tied to the word embeddings, and the pooler
#
# Lesson 06 turned ids into vectors with the word-embedding matrix E (V x H). The masked-LM head turns a
# vector back into a score for every word of the vocabulary, and BERT does it with the same E (Press & Wolf
# 2017; Google's `get_masked_lm_output`): logits = transform(h)·Eᵀ + b. One matrix serves going in and coming
# out, and saves V·H parameters. The NSP head reads one vector per pair: the pooler's tanh(Dense(h_[CLS])).
# Both live in `minibert/model/pretraining.py` (`MaskedLMHead`) and `minibert/model/bert.py` (`Pooler`).

# %%
import course  # noqa: F401  (sets up the import path and the output folder)
import numpy as np

from minibert import Tensor
from minibert import functional as F
from minibert.model import BertConfig, BertForPreTraining

config = BertConfig.preset("tiny", vocab_size=50, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model = BertForPreTraining(config, seed=0)
E = model.bert.embeddings.word_embeddings.weight  # (V, H)

# %% [markdown]
# ## One matrix, two uses
#
# The head holds no decoder matrix of its own: its logits are the transformed vector times Eᵀ. So E's
# gradient gets two contributions, which the engine adds: from the ids looked up at the input, and from every
# score the decoder made. Rows of words that never appear in the batch still get a gradient, from the output
# side alone. The loss here is the simplest one that asks for a word: minus the log-probability the softmax
# (lesson 04) gives the right word, 8, at the one position asked about (lesson 10 makes it BERT's MLM loss).

# %%
ids = np.array([[2, 7, 8, 9, 3, 0]])  # [CLS] three words [SEP] [PAD]
mask = (ids != 0).astype(np.int64)
output = model(ids, attention_mask=mask, masked_positions=np.array([[2]]))
h = model.cls.predictions.transform(model.bert(ids, attention_mask=mask).sequence_output[:, 2:3]).data  # (1, 1, H)
by_hand = h @ E.data.T + model.cls.predictions.bias.data  # (1, 1, V)
print(f"logits {output.mlm_logits.shape}; by hand transform(h)·Eᵀ + b: largest difference "
      f"{np.abs(by_hand - output.mlm_logits.data).max():.1e}")
assert np.abs(by_hand - output.mlm_logits.data).max() < 1e-5

loss = -F.log_softmax(output.mlm_logits, axis=-1)[0, 0, 8]  # (1, 1, V) -> the right word's -log p
loss.backward()
unseen = [row for row in range(config.vocab_size) if row not in ids]
print(f"E's gradient: rows of input words {np.abs(E.grad[[7, 8, 9]]).sum():.3f}, rows of 40+ unseen words "
      f"{np.abs(E.grad[unseen]).sum():.3f} (from the decoder alone)")
assert np.abs(E.grad[unseen]).sum() > 0  # the decoder's use reaches E too: tied
names = [name for name, _ in model.named_parameters()]
tied_saving = config.vocab_size * config.hidden_size
print(f"{len(names)} parameter tensors, no decoder matrix among them ({'cls.predictions.decoder.weight' in names}); "
      f"tying saves V·H = {tied_saving:,} numbers here, {30522 * 768:,} in BERT-base")
assert "cls.predictions.decoder.weight" not in names

# %% [markdown]
# ## The pooler: one vector per sequence
#
# NSP and the classifiers of lesson 14 need one vector for a whole pair. BERT takes the final vector of the
# first token, [CLS], and passes it through a Dense layer and tanh: pooled = tanh(W·h_[CLS] + b). Nothing else
# reads it; attention lets [CLS] gather what the task needs from every token.

# %%
encoded = model.bert(ids, attention_mask=mask)
pooled_by_hand = np.tanh(encoded.sequence_output.data[:, 0] @ model.bert.pooler.dense.weight.data.T
                         + model.bert.pooler.dense.bias.data)  # (B, H)
print(f"pooled output {encoded.pooled_output.shape}: by hand tanh(Dense(h_[CLS])) differs by "
      f"{np.abs(pooled_by_hand - encoded.pooled_output.data).max():.1e}; every value in (-1, 1)")
assert np.abs(pooled_by_hand - encoded.pooled_output.data).max() < 1e-5
assert np.all(np.abs(encoded.pooled_output.data) < 1)
changed = ids.copy()
changed[0, 4] = 11  # the last word, not [CLS]: the pooled vector still changes, through attention
print("a word far from [CLS] changes the pooled vector:",
      not np.allclose(model.bert(changed, attention_mask=mask).pooled_output.data, encoded.pooled_output.data))
assert not np.allclose(model.bert(changed, attention_mask=mask).pooled_output.data, encoded.pooled_output.data)
print("nsp logits", Tensor(output.nsp_logits.data).shape, "= Linear(H, 2) of the pooled vector")

# %% [markdown]
# **Exercise 06a** (`python -m minibert.exercises start 06a`): write `MaskedLMHead.forward` (`tied_decoder`).
# The tests catch an untied decoder (a copy of E gets no gradient), a missing bias and a skipped transform.
