# %% [markdown]
# # Lesson 06 — input = token + segment + position embeddings, and the 512 limit
#
# BERT's input vector for each token is the sum of three learned vectors (paper §3, Figure 2):
#
# - the **token** embedding, one row per WordPiece id (30k rows in BERT-base);
# - the **segment** embedding, E_A or E_B: is the token in sentence A or in sentence B?;
# - the **position** embedding, one learned row per position 0..511.
#
# The sum is layer-normalised, and that is all the model knows about its input.

# %%
import course
import numpy as np

from minibert.errors import ShapeError
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import BertTokenizer
from minibert.viz import heatmap, heatmap_svg

tokenizer = BertTokenizer(course.ROOT / "data" / "synthetic" / "vocab.txt")
config = BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size)
model = BertModel(config, seed=0).eval()
embeddings = model.embeddings

# %% [markdown]
# ## A sentence pair, laid out
#
# (Calling ahead, because the segment embedding needs two sentences: the tokenizer is lesson 07's, and why
# BERT reads pairs as `[CLS] A [SEP] B [SEP]` is lesson 09's. Here only the layout matters.)

# %%
encoded = tokenizer.encode("Chloe gave Oscar a slice of pizza.", "他们 都 住 在 成都 。")
tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
print(f"{'token':>8} {'id':>5} {'segment':>8} {'position':>9}")
rows = zip(tokens, encoded["input_ids"], encoded["token_type_ids"], strict=True)
for position, (token, token_id, segment) in enumerate(rows):
    print(f"{token:>8} {token_id:>5} {'AB'[segment]:>8} {position:>9}")

# %% [markdown]
# ## The three lookups, summed
#
# Below, the same sum computed by hand from the three tables and compared with the module's output.

# %%
ids = np.array([encoded["input_ids"]])
segments = np.array([encoded["token_type_ids"]])
word = embeddings.word_embeddings.weight.data[ids]  # (1, S, H)
segment = embeddings.token_type_embeddings.weight.data[segments]  # (1, S, H): only two distinct rows
position = embeddings.position_embeddings.weight.data[: ids.shape[1]]  # (S, H): row i for position i
summed = word + segment + position
centered = summed - summed.mean(-1, keepdims=True)
by_hand = centered / np.sqrt(summed.var(-1, keepdims=True) + config.layer_norm_eps)  # LN weight 1, bias 0
print("module output == LayerNorm(word + segment + position):",
      np.allclose(embeddings(ids, segments).data, by_hand, atol=1e-5))
assert np.allclose(embeddings(ids, segments).data, by_hand, atol=1e-5)

# %% [markdown]
# The same token gets a different input vector at each position and in each segment: that is how the
# otherwise order-blind attention of lesson 05 can tell "猫 chases 狗" from "狗 chases 猫".

# %%
cat = tokenizer.convert_tokens_to_ids(["猫"])[0]
out = embeddings(np.array([[cat, cat, cat]]), np.array([[0, 0, 1]])).data[0]
print("猫 at positions 0, 1 (segment A) and 2 (segment B): pairwise cosine similarity")
unit = out / np.linalg.norm(out, axis=1, keepdims=True)
print((unit @ unit.T).round(3))
assert np.all((unit @ unit.T)[np.triu_indices(3, k=1)] < 0.999)  # one token, three different input vectors

# %% [markdown]
# ## Learned positions cap the length at 512
#
# The Transformer paper used fixed sinusoids, which extend to any length. BERT *learns* one vector per
# position, so a position it has no row for does not exist: the model cannot read token 513. minibert says
# so instead of failing inside an index.

# %%
print("position table:", embeddings.position_embeddings.weight.shape, "(max_position_embeddings, H)")
try:
    model(np.zeros((1, config.max_position_embeddings + 1), dtype=np.int64))
    raise AssertionError("a sequence longer than the position table was read")
except ShapeError as error:
    print("error:", error)

# %% [markdown]
# Untrained, the learned position vectors are random, so nearby positions are no more alike than distant
# ones; sinusoids are alike by construction. Pretraining (lesson 12) gives the learned table its structure.

# %%
positions = np.arange(16)
frequencies = 1.0 / 10000 ** (np.arange(0, 64, 2) / 64)
angles = positions[:, None] * frequencies  # (16, 32)
sinusoid = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)  # (16, 64), Vaswani et al. §3.5
learned = embeddings.position_embeddings.weight.data[:16]


def cosine(m):
    unit = m / np.linalg.norm(m, axis=1, keepdims=True)
    return unit @ unit.T


labels = [str(p) for p in positions]
for name, table in (("sinusoid", sinusoid), ("learned_init", learned)):
    similarity = cosine(table)
    scale = (float(similarity.min()), 1.0)
    print(heatmap(similarity, labels, labels, f"{name} positions: cosine similarity", value_range=scale))
    course.save(f"06_positions_{name}.svg", heatmap_svg(similarity, labels, labels, f"{name} positions",
                                                        value_range=scale))
sizes = [table.weight.size for table in (embeddings.word_embeddings, embeddings.position_embeddings,
                                       embeddings.token_type_embeddings)]
print("parameters in the word, position and segment tables: " + ", ".join(f"{n:,}" for n in sizes))

# %% [markdown]
# **Exercise 06** (`python -m minibert.exercises start 06`): write `BertEmbeddings.forward`
# (`embeddings_sum`): three lookups, one sum, LayerNorm, dropout.
