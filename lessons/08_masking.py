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
# prediction for real tokens too, and the random 10% keep it from trusting its input blindly. The paper
# tried other splits (appendix C.2, Table 8): fine-tuned MNLI barely moved (83.6 to 84.4), and the mismatch
# showed where BERT's features were used frozen: always [MASK] gave 94.0 NER F1, 80/10/10 gave 94.9.
# `create_masked_lm_predictions` (`minibert/data/masking.py`) is the one place this happens.

# %%
import course
import numpy as np

from minibert.data import MaskingConfig, SpecialTokens, create_masked_lm_predictions
from minibert.data.documents import word_starts_of
from minibert.tokenizer import BertTokenizer

tokenizer = BertTokenizer(course.ROOT / "data" / "synthetic" / "vocab.txt")
special = SpecialTokens.from_tokenizer(tokenizer)
config = MaskingConfig()
rng = np.random.default_rng(0)

# %% [markdown]
# ## One sequence
#
# (The sequence is a pair `[CLS] A [SEP] B [SEP]`, as pretraining builds them; lesson 09 explains how the
# pairs are made. Masking treats it as one sequence, and never chooses [CLS] or [SEP].)

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
assert abs(counts["chosen"] / counts["tokens"] - 0.15) < 0.005
for kind, target in (("mask", 0.8), ("random", 0.1), ("unchanged", 0.1)):
    share = counts[kind] / counts["chosen"]
    sigma = np.sqrt(share * (1 - share) / counts["chosen"])
    print(f"{kind:<9} {share:6.2%} of chosen ± {sigma:.2%}   {'█' * round(share * 50)}")
    assert abs(share - target) < 5 * sigma + 0.002  # 80/10/10, within 5 standard errors

# %% [markdown]
# ## Whole-word masking
#
# With `whole_word=True` (the default), the pieces of one word are chosen together: `play ##ing` is hidden
# as a unit, never half of it (Google's later release, May 2019; Chinese is the next section).

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
# ## Chinese: whole words need a segmenter
#
# Chinese has no `##`. BERT's basic tokenizer puts a space around every CJK character before WordPiece
# (lesson 07), so `北京` becomes `北 京`, two tokens that look like two words. Google's whole-word masking
# finds words by `##` alone, so on Chinese it masks single characters: `--do_whole_word_mask` changes
# nothing there (google-research/bert issue 780, where the answer is to segment the corpus into words
# first and change the code to read those boundaries). HFL's Chinese BERT-wwm did that: it segmented
# Chinese Wikipedia with LTP, a word segmenter, and masked whole words (Cui et al. 2019).
#
# minibert reads the boundaries from the corpus line (`word_starts_of` in `minibert/data/documents.py`): a
# line with spaces between Chinese words is segmented, and characters written together form one word; a
# line without any such space is taken as unsegmented, one word per character, as in Google's code. We
# have no segmenter here, so the boundaries below are given by hand, as a segmenter would write them.

# %%
UNSEGMENTED = "小明给小红买了一本书，他们都住在北京。"  # what a corpus without spaces holds
SEGMENTED = "小明 给 小红 买 了 一本 书 ， 他们 都 住 在 北京 。"  # the same, after a word segmenter


def with_specials(line):
    """ids of [CLS] line [SEP] and (L,) word starts ([CLS] and [SEP] are words of their own)."""
    ids = np.array(tokenizer.encode(line)["input_ids"])
    return ids, np.concatenate([[True], word_starts_of(line, tokenizer.tokenize(line)), [True]])


def as_words(tokens, starts):
    """The tokens with a space before each word start: `小明 给 小红` (Chinese needs no other space)."""
    return "".join((" " if start else "") + token for token, start in zip(tokens, starts, strict=True)).strip()


ALWAYS_MASK = MaskingConfig(mask_token_prob=1.0, random_token_prob=0.0)  # every chosen token shows as [MASK]
for name, line in (("without boundaries", UNSEGMENTED), ("with boundaries", SEGMENTED)):
    ids, starts = with_specials(line)
    tokens = tokenizer.convert_ids_to_tokens(ids)
    print(f"{name}, the units masking chooses from: {as_words(tokens, starts)}")
    for seed in range(3):
        out = create_masked_lm_predictions(ids, starts, np.random.default_rng(seed), special, ALWAYS_MASK)
        print("    " + "".join(tokenizer.convert_ids_to_tokens(out.input_ids)[1:-1]))

# %% [markdown]
# The token ids are the same on both lines; only the word starts differ. Counted over 2,000 draws: how
# often is a two-character word (小明, 小红, 一本, 他们, 北京) half hidden, one character masked and the other
# left for the model to read?

# %%
draws = 2000
_, word_units = with_specials(SEGMENTED)
word_ends = np.append(np.flatnonzero(word_units)[1:], len(word_units))
pairs = [(start, end) for start, end in zip(np.flatnonzero(word_units), word_ends, strict=True) if end - start == 2]
for name, line in (("without boundaries", UNSEGMENTED), ("with boundaries", SEGMENTED)):
    ids, starts = with_specials(line)
    halves = 0
    for _ in range(draws):
        chosen = set(create_masked_lm_predictions(ids, starts, rng, special, config).positions.tolist())
        halves += any(len(chosen & {start, start + 1}) == 1 for start, _ in pairs)
    print(f"{name:>18}: a word half hidden in {halves / draws:6.1%} of the draws")
    # whole-word masking with a segmenter's boundaries never leaves a word half hidden; without them, often
    assert (halves == 0) if name == "with boundaries" else (halves / draws > 0.5)

# %% [markdown]
# Character masking lets the model fill `北[MASK]` from `北` alone, an easy guess that teaches little about
# the sentence; whole-word masking makes it recover `北京` from the words around it. For a corpus of your
# own without spaces, run a Chinese word segmenter (LTP, jieba, pkuseg, ...) over it first and write its
# words separated by spaces; the tokenizer still reads one character at a time, and only the masking
# changes.

# %% [markdown]
# **Exercise 08** (`python -m minibert.exercises start 08`): write the 80/10/10 draw (`mask_80_10_10`);
# its tests count outcomes over thousands of sequences and accept anything within 5 standard deviations.
