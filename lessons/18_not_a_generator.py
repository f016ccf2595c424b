# %% [markdown]
# # Lesson 18 — BERT is not a generator
#
# GPT writes text one token after another; BERT fills blanks. Can BERT write, if we give it a row of
# [MASK]s and fill them one at a time, each guess fed back in, left to right? We train both kinds of tiny
# model on the same English sentences of the synthetic stories, the same number of steps, and ask them to
# finish the same prompts:
#
#     GPT:   On Monday, Chloe and Oscar  →  went  →  to  →  the  →  ...  →  [SEP]   (it decides when to stop)
#     BERT:  On Monday, Chloe and Oscar [MASK] [MASK] [MASK] [MASK] .                (we decide the length)
#                                       ↑ fill this one, feed it back, then the next
#
# The two models are lesson 05's one mask apart, and lesson 10's two losses: BERT's on the ~15% chosen
# positions, GPT's on every next token.

# %%
import course
import numpy as np

from minibert.autograd import no_grad
from minibert.data import MaskingConfig, SpecialTokens
from minibert.data.corpora.synthetic import corpus_documents, sentence_key
from minibert.data.features import mask_rows
from minibert.fast import process_plan
from minibert.model import causal_lm_loss
from minibert.optim import bert_optimizer
from minibert.tokenizer import BertTokenizer
from minibert.train import run_preset
from minibert.train.pretraining_setup import build_model, build_scheduler
from minibert.train.update import checked_update, train_step
from minibert.viz import line_chart, line_chart_svg, sparkline

tokenizer = BertTokenizer(course.ROOT / "data" / "synthetic" / "vocab.txt")
special = SpecialTokens.from_tokenizer(tokenizer)
sentences = [s for document in corpus_documents(seed=0, num_documents=600) for s in document if s.isascii()]
encoded = tokenizer.batch_encode(sentences)  # every sentence once, as [CLS] sentence [SEP], padded
print(f"{len(sentences):,} training sentences, e.g. {sentences[4]!r}")

# %% [markdown]
# ## One mask apart
#
# Before any training: change the last word of a sentence, and a causal model's outputs at every earlier
# position stay the same, since no position sees to its right; a bidirectional model's all change. This is
# what lets GPT train on every next token at once: position i cannot peek at token i + 1, its answer.

# %%
original = np.array([tokenizer.encode(sentences[4])["input_ids"]])  # (1, S): [CLS] ... last word . [SEP]
changed = original.copy()
changed[0, -3] = tokenizer.mask_token_id  # the last word
for kind in ("causal", "bidirectional"):
    untrained = build_model(run_preset("tiny", use_nsp=False, attention=kind), tokenizer.vocab_size).eval()
    with no_grad():
        before, after = (untrained(ids).mlm_logits.data[0, :-3] for ids in (original, changed))  # (S - 3, V)
    unchanged = [bool(np.allclose(b, a, rtol=0, atol=1e-6)) for b, a in zip(before, after, strict=True)]
    print(f"{kind:>13}: {sum(unchanged)} of the {len(unchanged)} positions before the last word keep their "
          "outputs when it changes")
    assert all(unchanged) if kind == "causal" else not any(unchanged), unchanged

# %% [markdown]
# ## Two tiny models, one corpus, one budget
#
# Each step takes 32 sentences. BERT's step is the pretraining loop's own (`train_step`, masked LM only,
# a fresh 15% / 80-10-10 mask per sentence); GPT's runs the same encoder with the causal mask and
# `causal_lm_loss`, every position predicting the next token. Quick mode trains each for 700 steps (10-15 s
# each), `--full` for 2,000.

# %%
STEPS, BATCH = (2000 if course.FULL else 700), 32


def batch_rows(rng):
    """32 random sentences as unmasked rows (Google's field names), cut to the longest of them."""
    chosen = rng.choice(len(sentences), BATCH, replace=False)
    length = int(encoded["attention_mask"][chosen].sum(axis=1).max())
    ids = encoded["input_ids"][chosen, :length]
    return {"input_ids": ids, "input_mask": encoded["attention_mask"][chosen, :length],
            "segment_ids": encoded["token_type_ids"][chosen, :length],
            "word_starts": np.ones(ids.shape, bool), "next_sentence_labels": np.zeros(BATCH, np.int32)}


def train(kind):
    config = run_preset("tiny", use_nsp=False, attention=kind, steps=STEPS, batch_size=BATCH, seed=0)
    model = build_model(config, tokenizer.vocab_size)
    optimizer = bert_optimizer(model.named_parameters(), **config.optimizer_settings())
    scheduler = build_scheduler(optimizer, config, STEPS)
    rng, losses = np.random.default_rng(0), []
    # The training commands' use of the cores (minibert/fast/process.py): without it Numba's idle threads spin
    # after each small kernel and take the cores from BLAS. The same numbers, several times sooner.
    with process_plan():
        for _ in range(STEPS):
            rows = batch_rows(rng)
            if kind == "bidirectional":
                batch = mask_rows(rows, rng, special, MaskingConfig())
                losses.append(train_step(model, model.parameters(), optimizer, scheduler, batch, config).loss)
            else:
                logits = model(rows["input_ids"], rows["segment_ids"], rows["input_mask"]).mlm_logits  # (B, S, V)
                loss = causal_lm_loss(logits, rows["input_ids"], rows["input_mask"])
                losses.append(checked_update(loss, model, model.parameters(), optimizer, scheduler,
                                             config.max_grad_norm)[0])
    print(f"{kind:>13}: loss {losses[0]:.2f} -> {np.mean(losses[-50:]):.2f}  {sparkline(losses, width=50)}")
    return model.eval()


bert, gpt = train("bidirectional"), train("causal")

# %% [markdown]
# ## Three ways to finish a sentence
#
# - GPT, greedy: append the most likely next token until it says [SEP].
# - BERT, left to right: put n [MASK]s and a full stop after the prompt; fill the first [MASK] with BERT's
#   best guess, feed the sentence back in, fill the next, and so on.
# - BERT, all at once: fill every [MASK] from the one first pass.
#
# BERT is given n = the number of tokens GPT wrote before its full stop, so it gets the length for free.

# %%


def ids_of(text):
    return tokenizer.encode(text)["input_ids"]


def predict(model, ids):
    with no_grad():
        return model(np.array([ids])).mlm_logits.data[0]  # (S, V)


def continue_prompt(prompt, max_new=24):
    ids = ids_of(prompt)[:-1]  # [CLS] prompt, without its [SEP]
    while len(ids) < len(ids_of(prompt)) + max_new:
        following = int(np.argmax(predict(gpt, ids)[-1]))
        if following == tokenizer.sep_token_id:
            break
        ids.append(following)
    return ids[1:]


def fill_masks(prompt, count, left_to_right=True):
    """BERT fills `count` [MASK]s after the prompt (and before a full stop); returns the tokens it wrote."""
    ids = ids_of(prompt + " [MASK]" * count + " .")
    blanks = [position for position, token in enumerate(ids) if token == tokenizer.mask_token_id]
    for step in range(count if left_to_right else 1):
        logits = predict(bert, ids)  # (S, V)
        for position in blanks[step:step + 1] if left_to_right else blanks:
            ids[position] = int(np.argmax(logits[position]))
    return ids[1:-1]


def words_of(tokens):
    return " ".join(tokens).replace(" ##", "")


def words(ids):
    return words_of(tokenizer.convert_ids_to_tokens(ids))


for prompt in ("On Monday, Chloe and Oscar", "Chloe gave Oscar", "Tom works at", "Oscar did not want to"):
    written = continue_prompt(prompt)
    count = len(written) - len(ids_of(prompt)) + 2 - (tokenizer.ids_to_tokens[written[-1]] == ".")
    print(f"{prompt!r}, {count} tokens to write\n  GPT                 {words(written)}"
          f"\n  BERT, left to right {words(fill_masks(prompt, count))}"
          f"\n  BERT, all at once   {words(fill_masks(prompt, count, left_to_right=False))}")

# %% [markdown]
# All at once, each blank is guessed as if the others stayed unknown, so two blanks can take the same
# word. Left to right, each guess sees the ones before it; but every guess is made with the blanks after
# it still [MASK], and BERT was trained with 15% of a sentence masked, not half of it. How much does
# that cost? Mask a growing share of held-out sentences (all [MASK], random positions) and count how
# many of the hidden tokens BERT gets back:

# %%
held_out = [s for document in corpus_documents(seed=1, num_documents=40) for s in document  # unseen stories
            if s.isascii() and s.endswith(".")]
batch = tokenizer.batch_encode(held_out[:200])
ids, lengths = batch["input_ids"], batch["attention_mask"].sum(axis=1)  # (N, S), (N,)
rng = np.random.default_rng(0)
shares, recovered = (0.15, 0.3, 0.5, 0.7, 0.9), []
for share in shares:
    masked, hidden = ids.copy(), np.zeros(ids.shape, bool)
    for row, length in enumerate(lengths):
        chosen = rng.choice(np.arange(1, length - 1), max(1, round(share * (length - 2))), replace=False)
        masked[row, chosen], hidden[row, chosen] = tokenizer.mask_token_id, True
    with no_grad():
        guesses = bert(masked, batch["token_type_ids"], batch["attention_mask"]).mlm_logits.data.argmax(-1)
    recovered.append(float(np.mean(guesses[hidden] == ids[hidden])))
    print(f"{share:4.0%} of the tokens masked: {recovered[-1]:6.1%} of them recovered  "
          + "█" * round(50 * recovered[-1]))
# the more is hidden, the less context is left to recover it from
assert recovered[0] > recovered[-1] + 0.2
curve = {"BERT": ([100 * share for share in shares], recovered)}
print(line_chart(curve, width=50, height=8, title="hidden tokens recovered vs % masked"))
course.save("18_masked_share.svg", line_chart_svg(curve, "BERT trained at 15%: tokens recovered as more are masked",
                                                   "% of the sentence masked", "share recovered"))

# %% [markdown]
# ## From nothing, and counted over held-out prompts
#
# From an empty prompt, GPT starts at [CLS]; BERT gets eight [MASK]s and a full stop. Then 60 prompts from
# stories neither model saw (the first half of each sentence), finished all three ways, and counted: is
# the result a sentence that the story generator writes? The reference is every English sentence of 2,000
# stories. It is a strict test: a sentence it never wrote may still be good English, so the same count for
# the held-out sentences themselves is printed as the ceiling.

# %%
print(f"GPT from [CLS]:           {words(continue_prompt(''))}")
print(f"BERT from 8 [MASK]s + '.': {words(fill_masks('', 8))}")

reference = {sentence_key(s) for document in corpus_documents(seed=0, num_documents=2000) for s in document
             if s.isascii()}
found = {"held-out sentences themselves": 0, "GPT": 0, "BERT, left to right": 0, "BERT, all at once": 0}
for sentence in held_out[200:260]:
    tokens = tokenizer.tokenize(sentence)
    half = len(tokens) // 2
    prompt, count = words_of(tokens[:half]), len(tokens) - half - 1  # BERT gets the true length, "." given
    for name, result in (("held-out sentences themselves", tokenizer.convert_tokens_to_ids(tokens)),
                         ("GPT", continue_prompt(prompt)),
                         ("BERT, left to right", fill_masks(prompt, count)),
                         ("BERT, all at once", fill_masks(prompt, count, left_to_right=False))):
        found[name] += sentence_key(words(result)) in reference
for name, count in found.items():
    print(f"{name:>30}: {count:>2} of 60 are sentences of the stories  {'█' * count}")
# GPT writes sentences of the stories; BERT filling every blank at once does not
assert found["GPT"] > found["BERT, all at once"] + 10

# %% [markdown]
# ## Why
#
# - **What each learned.** GPT's loss is log p(x_1) + log p(x_2 | x_1) + ... : the chain rule, so its
#   one-token-at-a-time guesses multiply into a probability for the whole sentence, and sampling them in
#   order samples sentences. BERT learned p(x_i | everything else) for the ~15% of tokens chosen in a
#   sentence otherwise whole. Those conditionals do not come with an order, and chaining them left to
#   right is not a factorisation of any joint distribution BERT was trained on. (Wang & Cho 2019 sampled
#   BERT by redrawing one token at a time from its conditional, over and over, and found the sentences
#   more varied than a left-to-right model's but of slightly worse quality.)
# - **Out of distribution.** BERT never saw a sentence most of whose tokens are [MASK]: at 15% a
#   10-token sentence has one or two. A row of [MASK]s after the prompt is an input unlike any in
#   training, and what BERT guesses for the first blank is a guess with most of its context missing.
# - **The length.** BERT fills the slots it is given; it cannot decide to stop. GPT says [SEP] when the
#   sentence is done.
#
# On a corpus this small and regular, BERT's left-to-right fill is sometimes right, which the count above
# shows; at scale the gap is the reason generation went to GPT and BERT's descendants to understanding
# (lesson 13 shows the other side: the blank only the right context decides, where GPT can only guess).
