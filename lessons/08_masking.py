# %% [markdown]
# # Lesson 08 — the masking routine: 15%, then 80/10/10
#
# BERT sees every token (lesson 05), so predicting a token it can see would be copying. The fix (paper
# §3.1): choose 15% of the tokens, hide them, and predict only those. Of the chosen tokens:
#
# - 80% are replaced by [MASK],
# - 10% by a random token,
# - 10% are left **unchanged**.
#
# Why not always [MASK]? Fine-tuning never shows [MASK]. The unchanged 10% make the model produce a good
# prediction for real tokens too, and the random 10% keep it from trusting its input blindly.
# `create_masked_lm_predictions` (`minibert/data/masking.py`) is the one place this happens.

# %%
import course
import numpy as np

from minibert.data import MaskingConfig, SpecialTokens, create_masked_lm_predictions
from minibert.tokenizer import BertTokenizer

tokenizer = BertTokenizer(course.ROOT / "data" / "synthetic" / "vocab.txt")
special = SpecialTokens.from_tokenizer(tokenizer)
config = MaskingConfig()
rng = np.random.default_rng(0)

# %% [markdown]
# ## One sequence

# %%
encoded = tokenizer.encode("Chloe gave Oscar a slice of pizza.", "They both live in Sydney.")
ids = np.array(encoded["input_ids"])
out = create_masked_lm_predictions(ids, None, rng, special, MaskingConfig(whole_word=False))
print("original:", " ".join(tokenizer.convert_ids_to_tokens(ids)))
print("input   :", " ".join(tokenizer.convert_ids_to_tokens(out.input_ids)))
print(f"chose {len(out.positions)} of {len(ids)} tokens (round(15% of {len(ids)}) = "
      f"{config.num_to_predict(len(ids))}) at positions {out.positions.tolist()};")
print("labels  :", tokenizer.convert_ids_to_tokens(out.labels), "([CLS] and [SEP] are never chosen)")

# %% [markdown]
# ## Measured over many sequences

# %%
samples = 3000
counts = {"chosen": 0, "tokens": 0, "mask": 0, "random": 0, "unchanged": 0}
for _ in range(samples):
    length = int(rng.integers(20, 128))
    ids = np.concatenate([[special.cls_id], rng.choice(special.random_token_ids, length - 2),
                          [special.sep_id]])
    out = create_masked_lm_predictions(ids, None, rng, special, MaskingConfig(whole_word=False))
    seen = out.input_ids[out.positions]
    counts["tokens"] += length
    counts["chosen"] += len(out.positions)
    counts["mask"] += int(np.sum(seen == special.mask_id))
    counts["unchanged"] += int(np.sum(seen == out.labels))
    counts["random"] += int(np.sum((seen != special.mask_id) & (seen != out.labels)))
print(f"chosen    {counts['chosen'] / counts['tokens']:.2%} of {counts['tokens']:,} tokens (target 15%)")
for kind in ("mask", "random", "unchanged"):
    share = counts[kind] / counts["chosen"]
    sigma = np.sqrt(share * (1 - share) / counts["chosen"])
    print(f"{kind:<9} {share:6.2%} of chosen ± {sigma:.2%}   {'█' * round(share * 50)}")

# %% [markdown]
# ## Whole-word masking
#
# With `whole_word=True` (the default), the pieces of one word are chosen together: `play ##ing` is hidden
# as a unit, never half of it (Google's later release; for Chinese, word boundaries come from the corpus).

# %%
encoded = tokenizer.encode("They were playing near the lake and swimming.")
ids = np.array(encoded["input_ids"])
tokens = tokenizer.convert_ids_to_tokens(ids)
word_starts = np.array([not token.startswith("##") for token in tokens])
for seed in range(3):
    out = create_masked_lm_predictions(ids, word_starts, np.random.default_rng(seed), special,
                                       MaskingConfig(mask_token_prob=1.0, random_token_prob=0.0))
    print(" ".join(tokenizer.convert_ids_to_tokens(out.input_ids)))

# %% [markdown]
# **Exercise 08** (`python -m minibert.exercises start 08`): write the 80/10/10 draw (`mask_80_10_10`);
# its tests count outcomes over thousands of sequences and accept anything within 5 standard deviations.
