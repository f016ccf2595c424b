# %% [markdown]
# # Lesson 09 — next sentence prediction pairs
#
# MLM teaches token-level knowledge. Many tasks (QA, inference) ask how two sentences relate, so BERT has a
# second pretraining task (paper §3.1): the input is `[CLS] A [SEP] B [SEP]`, and half the time B is the
# sentence that really followed A (IsNext, label 0), half the time a random sentence from another
# document (NotNext, label 1). A classifier on the final [CLS] vector guesses which.
# `create_instances_from_document` (`minibert/data/instances.py`) follows Google's code.

# %%
import course
import numpy as np

from minibert.data import InstanceConfig, Sentence, SpecialTokens, create_instances_from_document
from minibert.tokenizer import BertTokenizer

tokenizer = BertTokenizer(course.ROOT / "data" / "synthetic" / "vocab.txt")
special = SpecialTokens.from_tokenizer(tokenizer)
stories = [
    ["Ethan and Chloe are good friends.", "They both live in Sydney.", "Ethan works at the airport.",
     "On Monday, they went to the lake.", "Chloe gave Ethan a slice of pizza.", "They had a wonderful time."],
    ["李娜 和 杨帆 是 好 朋友 。", "他们 都 住 在 成都 。", "星期二 ， 杨帆 和 小军 去 了 公园 。"],
    ["Oscar is their neighbour.", "He likes the park.", "On Friday, Oscar found a glass of juice."],
]


def sentence(text):
    ids = np.array(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)), np.int32)
    return Sentence(ids, np.ones(len(ids), bool))


documents = [[sentence(text) for text in story] for story in stories]

# %% [markdown]
# ## Instances from the first document
#
# Sentences are gathered into a chunk until it reaches the target length, then the chunk is cut at a
# random sentence boundary into A and B. For NotNext, B comes from another document, and the chunk's
# sentences after A are **put back**, so they start the next chunk instead of being lost.

# %%
config = InstanceConfig(max_seq_length=40, short_seq_prob=0.0)
rng = np.random.default_rng(3)
for instance in create_instances_from_document(documents, 0, rng, special, config):
    tokens = tokenizer.convert_ids_to_tokens(instance.input_ids)
    label = ["IsNext", "NotNext"][instance.next_sentence_label]
    print(f"{label:>8}: {tokenizer.decode(instance.input_ids)}")
    print(f"{'':>8}  segments {''.join(str(s) for s in instance.segment_ids)}  ({len(tokens)} tokens)")

# %% [markdown]
# ## Where B comes from, checked
#
# The label is only worth learning if it is true: an IsNext B must be the text that follows A in its
# document, and a NotNext B must come from another document. Over 400 draws, each B is looked up in document
# 0's token stream: an IsNext B is found there after A (right after it, unless the trimming of a pair too long
# took tokens from the end of A or the front of B); a NotNext B is found nowhere in it.

# %%
def instances_of_document_0(max_seq_length):
    """Every instance of document 0 over 400 draws, with `max_seq_length` tokens each at most."""
    pairing = InstanceConfig(max_seq_length=max_seq_length, short_seq_prob=0.0)
    return [instance for seed in range(400)
            for instance in create_instances_from_document(documents, 0, np.random.default_rng(seed), special,
                                                           pairing)]


def sides(instance):
    """(A, B) token ids: A between [CLS] and the first [SEP], B between it and the last [SEP]."""
    first_sep = int(np.argmax(instance.segment_ids)) - 1
    return instance.input_ids[1:first_sep], instance.input_ids[first_sep + 1:-1]


def starts_of(run, stream):
    """Every index of `stream` where `run` begins."""
    return [i for i in range(len(stream) - len(run) + 1) if np.array_equal(stream[i:i + len(run)], run)]


stream_0 = np.concatenate([s.ids for s in documents[0]])  # document 0's tokens, one after another
pairs_40 = instances_of_document_0(40)
is_next = [sides(instance) for instance in pairs_40 if instance.next_sentence_label == 0]
not_next = [sides(instance) for instance in pairs_40 if instance.next_sentence_label == 1]
follows = [any(b_start >= a_start + len(a) for a_start in starts_of(a, stream_0) for b_start in starts_of(b, stream_0))
           for a, b in is_next]
elsewhere = [not starts_of(b, stream_0) for _, b in not_next]
print(f"{len(is_next)} IsNext pairs, {sum(follows)} with B after A in document 0; "
      f"{len(not_next)} NotNext pairs, {sum(elsewhere)} with B found nowhere in document 0")
assert all(follows) and all(elsewhere)

# %% [markdown]
# ## Balance, measured
#
# The paper's rule is 50% IsNext, 50% NotNext (BERT §3.1), and a chunk of two or more sentences follows it.
# But a chunk of ONE sentence has nothing to split, and Google's `create_pretraining_data.py` then always
# makes it NotNext (B from another document). How often that happens depends on how many tokens a chunk may
# hold against the sentences' length: with 37 tokens for A and B (max_seq_length 40), many of these stories'
# sentences fill a chunk alone; with 125 (BERT's 128), fewer do, but not none. A forced share f of the pairs
# makes the NotNext share f + (1 - f)/2, so f = 2·(share - 1/2). Measured on the same document:

# %%
def not_next_share(instances):
    labels = [instance.next_sentence_label for instance in instances]
    return len(labels), float(np.mean(labels))


count_40, share_40 = not_next_share(pairs_40)
count_128, share_128 = not_next_share(instances_of_document_0(128))
print(f"max_seq_length 40:  {count_40} instances from document 0, NotNext share {share_40:.3f}")
print(f"max_seq_length 128: {count_128} instances from document 0, NotNext share {share_128:.3f}")
forced_40, forced_128 = 2 * (share_40 - 0.5), 2 * (share_128 - 0.5)
print(f"pairs forced to NotNext by a one-sentence chunk: {forced_40:.0%} at 40, {forced_128:.0%} at 128")
# one-sentence chunks tilt the short pairs towards NotNext; long chunks bring the share back near one half,
# yet some chunks still hold one long sentence alone
assert share_40 > 0.55 and 0 < forced_128 < forced_40

# %% [markdown]
# RoBERTa (Liu et al. 2019) later found that dropping NSP, with inputs packed from whole contiguous
# sentences, matched or slightly improved the downstream results; ALBERT (Lan et al. 2019) argued NSP is
# too easy, since a NotNext B is usually on another topic, and replaced it with sentence-order prediction
# (SOP: B always follows A, sometimes swapped). Both are switches here:
# `InstanceConfig(sentence_task="none" | "sop")`.

# %%
sop_config = InstanceConfig(max_seq_length=40, short_seq_prob=0.0, sentence_task="sop")
for instance in create_instances_from_document(documents, 0, np.random.default_rng(1), special, sop_config):
    order = ["in order", "swapped"][instance.next_sentence_label]
    print(f"SOP {order:>8}: {tokenizer.decode(instance.input_ids)}")

# %% [markdown]
# **Exercise 09** (`python -m minibert.exercises start 09`): write the NotNext branch (`nsp_not_next`): B
# from a random other document, the unused sentences put back; the draw of that document and of B's first
# sentence (`nsp_random_document`); and `truncate_seq_pair`, which trims the longer side until A and B fit
# together. The tests tag every token with the document and sentence it came from.
