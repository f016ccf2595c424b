# %% [markdown]
# # Lesson 13 — watch bidirectional attention work
#
# The example of the course's article (docs/background.md): in `小明给小红 ___ 一本书`, a left-to-right model guessing
# the blank cannot see 书. In Chinese the measure word is decided by the noun *after* it (一**本**书 a book, 一**杯**茶
# a cup of tea, 一**辆**汽车 a car), as in English `a ___ of tea` (cup) or `wanted to ___ the truck` (drive).
#
# The `synthetic` corpus is built so that such a blank depends on nothing to its left: the sentence, the
# people and the numeral are drawn first, then the blank word uniformly, then a noun that fits it
# (`data/synthetic/README.md`, "Right-context words"). So a model that reads left to right can only guess,
# 1/7 for measure words, 1/6 for verbs, while a model that reads both ways can be exact.
#
# We train the same model twice with the same data, seed and steps: once with BERT's bidirectional mask,
# once with GPT's causal mask (lesson 05: one mask apart). Then we ask both about held-out sentences
# (`data/synthetic/probe.jsonl`) and look at where their [MASK] attends.

# %%
import json
import shutil

import course
import lab  # lessons/lab.py: reads back the experiments' stored runs
import numpy as np

from minibert.autograd import no_grad
from minibert.data.corpora.synthetic import probe_items
from minibert.inspect import fill_mask, load_for_inference
from minibert.inspect.attention_page import attention_page
from minibert.inspect.attention_view import attention_maps, tile_svgs
from minibert.inspect.probe import (
    candidate_scores,
    left_context_only,
    own_sentence,
    probe_accuracy,
    read_probe,
    report,
    train_on_blanks,
)
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import BertTokenizer
from minibert.train import pretrain, run_preset
from minibert.train.progress import ProgressLine
from minibert.viz import heatmap, heatmap_svg, sparkline

SYNTHETIC = course.ROOT / "data" / "synthetic"
KINDS = ("bidirectional", "causal")
tokenizer = BertTokenizer(SYNTHETIC / "vocab.txt")

# (text with [MASK], candidate ids, index of the answer among them, family), with only the sentence that
# holds the blank, like the article's `小明给小红 ___ 一本书` (probe.jsonl also gives the one before it, which
# bench/probe.py reads too)
probe = own_sentence(read_probe(SYNTHETIC / "probe.jsonl", tokenizer)[0])
print(f"{len(probe)} probe items, e.g. {probe[0][0]!r}")

# %% [markdown]
# ## Two models, one mask apart
#
# Before any training, the one difference, checked on two untrained models: take away the words after [MASK]
# and compare each model's scores for the candidates at [MASK]. Under the causal mask they cannot change,
# since [MASK] never sees those words; under the bidirectional mask they do.

# %%


def largest_change_without_the_right(model, items):
    """The largest change of a candidate's score at [MASK] once the words after [MASK] are taken away."""
    pairs = zip(candidate_scores(model, tokenizer, items), candidate_scores(model, tokenizer, left_context_only(items)),
                strict=True)
    return max(float(np.abs(full - left).max()) for full, left in pairs)


untrained = {kind: BertForPreTraining(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size, attention=kind),
                                      seed=0) for kind in KINDS}
change = {kind: largest_change_without_the_right(untrained[kind], probe[:64]) for kind in KINDS}
print("untrained, the largest change of a score at [MASK] without the words after it: "
      + ", ".join(f"{kind} {value:.2g}" for kind, value in change.items()))
assert change["causal"] < 1e-5 < change["bidirectional"]

# %% [markdown]
# Quick mode trains on the question itself, to see the effect in seconds: sentences with a right-context
# blank, always masked (2,500 of them, from stories the probe never uses: seed 1 instead of 0), 600 steps
# of 32. It is masked-LM training that picks its masked slot instead of drawing 15% at random; the batches
# are the usual pretraining batches, and `train_step` is the pretraining loop's own step (`blank_batches`
# and `train_on_blanks` in `minibert/inspect/probe.py`).
#
# `--full` does it the honest way, as `bench/probe.py` does: ordinary masked-LM pretraining on the whole
# corpus, 4,000 steps per model, where a blank is masked only when the 15% draw hits
# it.

# %%
STEPS, BATCH = 600, 32


def quick_model(kind, items):
    model, losses = train_on_blanks(kind, items, tokenizer, STEPS, BATCH)
    print(f"{kind:>13}: loss {losses[0]:.2f} -> {np.mean(losses[-20:]):.2f}  {sparkline(losses, width=50)}")
    return model


def pretrain_on_corpus(kind):
    config = run_preset("tiny", corpus="synthetic", use_nsp=False, attention=kind, steps=4000, eval_every=1000)
    run_dir = course.OUTPUT / f"13_{kind}_run"
    if run_dir.exists():
        shutil.rmtree(run_dir)  # this lesson starts its runs over
    result = pretrain(config, run_dir, data_dir=SYNTHETIC, show_examples=False, progress=ProgressLine(),
                      log=lambda _: None)
    print(f"{kind:>13}: {result.step} steps, {result.evaluation.summary()}")
    return load_for_inference(run_dir)[0]


if course.FULL:
    models = {kind: pretrain_on_corpus(kind) for kind in KINDS}
else:
    training_file = course.OUTPUT / "13_blank_sentences.jsonl"
    training_file.parent.mkdir(parents=True, exist_ok=True)
    training_file.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n"
                                     for item in probe_items(seed=1, per_word=100)), encoding="utf-8")
    blanks = own_sentence(read_probe(training_file, tokenizer)[0])
    print(f"training on {len(blanks)} sentences with a right-context blank, e.g. {blanks[0][0]!r}")
    models = {kind: quick_model(kind, blanks) for kind in KINDS}

# %% [markdown]
# Both losses fall at first: each model learns which words can stand in a blank and how often. Only the
# bidirectional one keeps falling, because only it can read the noun that decides which word it is.
#
# ## The probe: 750 held-out blanks
#
# For each probe item the model sees the sentence with [MASK] in the blank and scores every candidate of
# its family with its MLM logit; the highest wins (`probe_accuracy` in `minibert/inspect/probe.py`).

# %%
chance = float(np.mean([1 / len(choice_ids) for _, choice_ids, _, _ in probe]))
accuracy = {kind: report(f"{kind:>13}", probe_accuracy(models[kind], tokenizer, probe), chance)
            for kind in KINDS}

# %% [markdown]
# Is it really the words on the right? Take them away (`[CLS] 小东给小雪买了两 [MASK] [SEP]`) and ask again.
# The causal model's scores cannot change, since it never saw those words; the bidirectional model's
# accuracy should fall to chance.

# %%
left_only = left_context_only(probe)
left_accuracy = {kind: report(f"{kind:>13}, words after [MASK] removed",
                              probe_accuracy(models[kind], tokenizer, left_only), chance) for kind in KINDS}
# the causal model's answers stay (up to a near-tie that rounding may flip); the bidirectional one's fall to
# chance: what it knew came from the right
assert abs(left_accuracy["causal"] - accuracy["causal"]) <= 2 / len(probe)
assert left_accuracy["bidirectional"] < chance + 0.05

# %% [markdown]
# ## Where does [MASK] look?
#
# Each row L·H below is one attention head (layer L, head H): how much of [MASK]'s new vector comes from
# each token (the answer and each model's top three guesses over the whole vocabulary are above each
# picture). The causal model's rows end at [MASK] itself: everything to its right is masked out, exactly 0.
#
# A head can also read the noun in two hops: in layer 0 a neighbour of [MASK] (`a`, `the`, the numeral)
# gathers the noun, and in layer 1 [MASK] reads that neighbour. The last row, `rollout`, follows the
# weights through both layers (attention rollout, Abnar & Zuidema 2020: average the heads, count the
# residual connection as half of each layer's mixing, multiply the layers' matrices), so it shows where
# [MASK]'s information comes from in the end.

# %%
EXAMPLES = (probe[2], probe[6])  # 小东给小雪买了两 [只] 小鸟。 / Lucy bought a [cup] of tea for Sam.


def rollout(attentions):
    """L x (..., A, S, S) attention probabilities -> (..., S, S): row i = how much of each input token
    reaches position i through all layers."""
    flow = None
    for weights in attentions:
        mixing = 0.5 * weights.mean(axis=-3) + 0.5 * np.eye(weights.shape[-1])  # heads averaged, + residual
        flow = mixing if flow is None else mixing @ flow  # layer l's output mixes layer l-1's
    return flow


def mask_rows(model, text):
    """(tokens, labels, rows): the [MASK] query's attention in every layer and head, one row per head,
    and its rollout row."""
    tokens, attentions = attention_maps(model, tokenizer, text)
    position = tokens.index("[MASK]")
    heads = [(layer, head) for layer in range(len(attentions)) for head in range(len(attentions[layer]))]
    rows = [attentions[layer][head, position] for layer, head in heads] + [rollout(attentions)[position]]
    return tokens, [f"L{layer} H{head}" for layer, head in heads] + ["rollout"], np.stack(rows)


def guesses(model, text):
    top = fill_mask(model, tokenizer, text, top_k=3)[0]
    return ", ".join(f"{token} {probability:.0%}" for token, probability in top)


for number, (text, choice_ids, answer, _) in enumerate(EXAMPLES, start=1):
    print(f"answer: {tokenizer.ids_to_tokens[choice_ids[answer]]}")
    pictures = []
    for kind in KINDS:
        tokens, labels, rows = mask_rows(models[kind], text)
        print(heatmap(rows, labels, tokens, title=f"{kind}: where [MASK] looks (guesses: "
                      f"{guesses(models[kind], text)})", value_range=(0, 1)))
        pictures.append(heatmap_svg(rows, labels, tokens, f"{kind}: [MASK]'s attention", value_range=(0, 1)))
    course.save(f"13_mask_attention_{number}.svg", tile_svgs([pictures]))

# %% [markdown]
# The same sentences in the attention explorer, one page per model: hover [MASK] to see its lines in every
# head, click a picture of the model view to open that head. Each page also shows its model under the other
# mask: the bidirectional model read left to right loses the noun and its guess, and the causal model read
# both ways is shown words it never learnt to use.

# %%
for kind in KINDS:
    page, _ = attention_page(models[kind], tokenizer, [text for text, _, _, _ in EXAMPLES], name=f"{kind} model")
    course.save(f"13_explorer_{kind}.html", page)

# %% [markdown]
# Attention weights are a hint, not a proof (Jain & Wallace 2019, "Attention is not Explanation"): a head
# that gives 99% of its weight to a neighbour still mixes in a little of every other token, and a model
# trained this sharply can read the noun from that little. If a picture above shows [MASK] looking only
# left while its guess is right, that is what happened. The test that settles it came before the
# pictures: with the words after the blank taken away, the bidirectional model falls to chance.

# %% [markdown]
# ## Measured over the whole probe
#
# The share of [MASK]'s attention that goes to tokens on its right, averaged over heads and over the 750
# probe sentences: each layer's own weights, then the rollout through both. For the causal model it is 0
# by construction; the bidirectional model chose to look there, because that is where the answer is.

# %%


def right_share(model, items, batch_size=64):
    """(L + 1,) mean weight from [MASK] to the tokens after it, over heads and items: per layer, then the
    rollout through all layers."""
    totals = np.zeros(model.config.num_hidden_layers + 1)
    for start in range(0, len(items), batch_size):
        encoded = tokenizer.batch_encode([text for text, _, _, _ in items[start:start + batch_size]])
        positions = np.argmax(encoded["input_ids"] == tokenizer.mask_token_id, axis=1)  # (B,)
        with no_grad():
            output = model.bert(encoded["input_ids"], encoded["token_type_ids"], encoded["attention_mask"],
                                output_attentions=True)
        rows = np.arange(len(positions))
        right = np.arange(encoded["input_ids"].shape[1])[None, :] > positions[:, None]  # (B, S)
        from_mask = [weights[rows, :, positions].mean(axis=1) for weights in output.attentions]  # L x (B, S)
        from_mask.append(rollout(output.attentions)[rows, positions])  # (B, S)
        totals += [(weights * right).sum() for weights in from_mask]
    return totals / len(items)


shares = {kind: right_share(models[kind], probe) for kind in KINDS}
print(f"{'':>9} {'bidirectional':>14} {'causal':>8}   attention from [MASK] to its right")
names = [f"layer {layer}" for layer in range(len(shares["causal"]) - 1)] + ["rollout"]
for row, name in enumerate(names):
    print(f"{name:>9} {shares['bidirectional'][row]:>14.1%} {shares['causal'][row]:>8.1%}")
print(f"\nprobe accuracy: bidirectional {accuracy['bidirectional']:.1%}, causal {accuracy['causal']:.1%}, "
      f"chance {chance:.1%}")
# the article's argument in two numbers: the model that sees the right context solves the blanks that only
# it decides, the left-to-right one stays near chance; and only the bidirectional model looks to the right
assert accuracy["bidirectional"] > 0.8 and accuracy["causal"] < chance + 0.1
assert shares["causal"][-1] < 1e-6 < shares["bidirectional"][-1]

# %% [markdown]
# This is the article's whole argument in two numbers. Same weights shape, same data, same steps: the mask
# alone decides whether the model can use the words after the blank. GPT is built to generate, so it never
# needs them; BERT is built to understand a whole sentence at once, and the [MASK] trick (lesson 08) is
# what lets it train without seeing the answer.
#
# The paper measured the same thing at scale (§5.1, Table 5): a left-to-right model trained like BERT
# without NSP scored below the bidirectional one without NSP on every task, by 0.5 points on SST-2 and up
# to 10.1 F1 on SQuAD, where an answer's end depends on what follows it (docs/background.md).

# %% [markdown]
# ## The lab's run of the same question, with ELMo's arm
#
# `python -m minibert experiment direction` (docs/experiments.md) asks it as a controlled experiment: plain
# masked-LM pretraining on the whole corpus, 1,500 steps a model, 3 seeds per arm, and a third arm, ELMo's
# (Peters et al. 2018): a left-to-right and a right-to-left causal model trained apart, their scores added
# on the probe and their word vectors set side by side for NER. Its quick mode shows nothing of direction
# (80 steps leave every arm at chance on the probe), and its full runs take 12 minutes on `tiny` and more
# than an hour on `mini`, so the lesson reads back the stored ones.

# %%
lab.stored_run("direction", "full", (
    "the left-to-right model at chance on the probe, the bidirectional one far above it, and ELMo's pair "
    "above both, with two models' compute; the bidirectional model is still learning the probe at 1,500 "
    "steps (the `mini` run below). On NER, where the entity words mostly name themselves, the three are "
    "close."))
lab.stored_run("direction", "mini", (
    "the left-to-right model still at chance, whatever its size, while the bidirectional one now answers "
    "nearly every blank and ELMo's pair only draws level with it: on `tiny` the pair led because the "
    "bidirectional model had not finished learning. One model that sees both sides does what two one-way "
    "models do, at half the compute (the paper's §5.1)."))
