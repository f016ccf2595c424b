# %% [markdown]
# # Lesson 07 — WordPiece: `playing` → `play ##ing`
#
# BERT reads WordPiece tokens (paper §3; Wu et al. 2016). Frequent words stay whole, rare words split into
# pieces, and a piece that continues a word carries `##`. Any word built from known characters can be
# spelled, so [UNK] is rare. Two steps: the basic tokenizer (cleaning, lowercasing, punctuation and every
# CJK character split off), then WordPiece on each word, greedy longest match first.

# %%
import tempfile
from pathlib import Path

import course

from minibert.tokenizer import BertTokenizer, WordpieceTokenizer, train_wordpiece

# %% [markdown]
# ## Longest match first, by hand

# %%
vocab = {"[UNK]", "play", "##ing", "##ed", "##er", "un", "##aff", "##able", "p", "##l", "##a", "##y", "##s"}
wordpiece = WordpieceTokenizer(vocab)
for word in ["playing", "played", "players", "unaffable", "plays", "replay"]:
    print(f"{word:>10} -> {' '.join(wordpiece.tokenize_word(word))}")
assert wordpiece.tokenize_word("playing") == ("play", "##ing") and wordpiece.tokenize_word("replay") == ("[UNK]",)

# %% [markdown]
# `playing` could also be spelled `p ##l ##a ##y ##ing`; the greedy search takes the longest piece the
# vocabulary has at each position, so it finds `play` first. `replay` has no piece for `r`, and one failure
# makes the **whole word** [UNK] (one position lost, not several).

# %% [markdown]
# ## The full pipeline on a real vocabulary
#
# `data/synthetic/vocab.txt` was trained on the bilingual synthetic corpus: English words, Chinese
# characters.

# %%
tokenizer = BertTokenizer(course.ROOT / "data" / "synthetic" / "vocab.txt")
for text in ["Chloe was playing near the lake!", "李娜 和 杨帆 是 好 朋友 。", "Héllo, WORLD"]:
    tokens = tokenizer.tokenize(text)
    print(f"{text!r}\n   -> {tokens}\n   ids {tokenizer.convert_tokens_to_ids(tokens)}")
print("special tokens:", tokenizer.convert_ids_to_tokens(range(5)))

# %% [markdown]
# Chinese: every CJK character is its own word before WordPiece runs (Google's rule), so 朋友 becomes
# `朋 友`. That is why whole-word masking for Chinese (lesson 08) needs word boundaries from elsewhere.

# %% [markdown]
# ## Training a vocabulary
#
# Start from single characters and repeatedly merge the adjacent pair with the best score
# freq(ab) / (freq(a)·freq(b)) (`minibert/tokenizer/trainer.py`). Here, on a few sentences, to 60 tokens:
# watch `play` and `##ing` appear.

# %%
text = ("playing players played plays playing player\n" * 3 + "the cat is playing with the player\n"
        "running runners ran runs running\n" * 2)
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "tiny.txt"
    path.write_text(text, encoding="utf-8")
    learned = train_wordpiece([path], vocab_size=60, min_frequency=2)
merged = [token for token in learned if len(token.removeprefix("##")) > 1 and not token.startswith("[")]
print("learned pieces, in the order they were merged:", merged)
small = BertTokenizer.from_vocab_list(learned)
print("with this vocabulary, 'playing runners' ->", small.tokenize("playing runners"))

# %% [markdown]
# **Exercise 07** (`python -m minibert.exercises start 07`): write `WordpieceTokenizer._segment`
# (`wordpiece_longest_match`), the greedy loop; its tests compare with the obvious search on random words.
