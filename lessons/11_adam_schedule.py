# %% [markdown]
# # Lesson 11 — Adam, warmup and linear decay, and BERT's missing bias correction
#
# BERT pretrains with Adam at lr 1e-4, a linear warmup over the first 10,000 of 1,000,000 steps, then a
# linear decay to 0, with weight decay 0.01 (paper, appendix A.2); Google's `optimization.py` also clips the
# gradients to a global norm of 1.0, which the paper does not mention.
# `minibert/optim/adam.py` holds three update rules side by side: Adam, AdamW, and Google's
# `AdamWeightDecayOptimizer` (its TF1 `optimization.py`; `AdamWeightDecay` is the name of the TF2 and
# HuggingFace ports), here `BertAdam`, which has **no bias correction**.

# %%
from functools import partial

import course
import numpy as np

from minibert.model import BertConfig, BertModel
from minibert.nn.module import Parameter
from minibert.optim import Adam, AdamW, BertAdam, LRScheduler, bert_param_groups, linear_warmup_linear_decay
from minibert.viz import line_chart, line_chart_svg

# %% [markdown]
# ## The schedule, drawn
#
# Google's code and HuggingFace's draw the decay line differently: Google's runs from 1 at step 0 (so the
# peak right after warmup is 1 - warmup/total), HuggingFace's from 1 at the end of warmup.

# %%
total, warmup = 1000, 100
steps = np.arange(total + 1)
google = [linear_warmup_linear_decay(int(s), total, warmup, "google") for s in steps]
hugging = [linear_warmup_linear_decay(int(s), total, warmup, "huggingface") for s in steps]
print(line_chart({"google": (steps, google), "huggingface": (steps, hugging)}, width=64, height=12,
                 title=f"learning-rate multiplier: {warmup} warmup steps of {total}"))
course.save("11_schedule.svg", line_chart_svg({"google": (steps, google), "huggingface": (steps, hugging)},
                                              "linear warmup, linear decay", "step", "lr multiplier"))
print(f"right after warmup: google {google[warmup]:.2f}, huggingface {hugging[warmup]:.2f}")
assert np.isclose(google[warmup], 1 - warmup / total) and hugging[warmup] == 1.0 and google[0] == hugging[0] == 0

# %% [markdown]
# ## Adam in two lines
#
#     m = β1·m + (1-β1)·g          a running mean of the gradient
#     v = β2·v + (1-β2)·g²         a running mean of its square
#
# and each entry moves by about lr·m/√v: a step of roughly lr whatever the gradient's scale. Three
# parameters whose gradients differ by a factor of 10⁵ all move by about the same amount:

# %%
p = Parameter(np.zeros(3))
optimizer = Adam([p], lr=0.01)
p.grad = np.array([1e-3, 1.0, 100.0])
optimizer.step()
print("gradient", p.grad, "-> first Adam step", -p.data)
assert np.allclose(-p.data, 0.01, rtol=1e-3)  # lr, whatever the gradient's scale

# %% [markdown]
# ## Bias correction, and how long a warmup makes its absence harmless
#
# m and v start at 0, so early on they are too small: after one step m = 0.1·g and v = 0.001·g². Adam
# divides by (1 - β^t) to undo it, and its step is lr from the start. BertAdam does not, so its step is
# lr·0.1/√0.001 ≈ 3.2·lr at step 1, and it keeps growing while m catches up faster than v: m forgets its
# zero start in about 1/(1-β1) = 10 steps, v only in about 1/(1-β2) = 1,000, and until then the step is too
# large (still 1.26·lr at step 1,000). Devlin called the omission "mostly an oversight" that warmup makes
# harmless: while m/√v is oversized, the warmed-up learning rate that multiplies it is still small. That
# needs a warmup long against v's 1,000 steps, as BERT's 10,000 are; a warmup of 20 steps ends while
# BertAdam's ratio is still 6 times Adam's. Below, the same gradient at every step, lr 0.01, and the decay
# line of BERT's 1,000,000 steps. (Warmup has a second reason, the model's own: lesson 11a.)

# %%


def step_sizes(rule, warmup_steps, count=12_000):
    """|Δp| at each of `count` steps of `rule` with the gradient 1 every step, after `warmup_steps` of warmup."""
    p = Parameter(np.zeros(1))
    optimizer = rule([p], lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    scheduler = LRScheduler(optimizer, partial(linear_warmup_linear_decay, total_steps=1_000_000,
                                               warmup_steps=warmup_steps))
    sizes, previous = [], 0.0
    for _ in range(count):
        p.grad = np.ones(1)  # the same gradient every step
        optimizer.step()
        scheduler.step()
        sizes.append(abs(p.data[0] - previous))
        previous = p.data[0]
    return np.array(sizes)


lr = 0.01
adam, bert = step_sizes(Adam, 0), step_sizes(BertAdam, 0)
bert_by_warmup = {warmup: step_sizes(BertAdam, warmup) for warmup in (20, 1_000, 10_000)}
print(f"{'step':>6} {'Adam':>8} {'BertAdam':>9} {'BertAdam, warmup 20':>20} {'warmup 10,000':>14}   (in units of lr)")
for t in (1, 2, 11, 21, 100, 1_000, 5_000, 10_000, 12_000):
    print(f"{t:>6} {adam[t - 1] / lr:>8.3f} {bert[t - 1] / lr:>9.3f} {bert_by_warmup[20][t - 1] / lr:>20.3f} "
          f"{bert_by_warmup[10_000][t - 1] / lr:>14.3f}")
largest = {warmup: sizes.max() / lr for warmup, sizes in bert_by_warmup.items()}
print(f"BertAdam's largest step: {bert.max() / lr:.2f}·lr without warmup; "
      + ", ".join(f"{value:.2f}·lr with {warmup:,} warmup steps" for warmup, value in largest.items()))
xs = np.arange(1, 1_001)
course.save("11_first_steps.svg", line_chart_svg({"Adam": (xs, adam[:1_000]), "BertAdam": (xs, bert[:1_000]),
                                                  "BertAdam + 20 warmup steps": (xs, bert_by_warmup[20][:1_000])},
                                                 "step size, constant gradient", "step", "|Δp|"))
# m/√v without the corrections, from the moments' formulas: (1 - β1^t) / √(1 - β2^t) after t steps of g = 1
assert np.isclose(bert[0] / adam[0], 0.1 / np.sqrt(0.001), rtol=1e-4)  # BertAdam's step 1: 3.2x Adam's
assert np.isclose(bert[999] / adam[999], (1 - 0.9**1000) / np.sqrt(1 - 0.999**1000), rtol=1e-4)
assert bert.max() > 6 * lr and adam.max() <= lr  # bias correction keeps Adam's step at lr from the start
assert largest[20] > 6 and 1.2 < largest[1_000] < 1.3 and largest[10_000] <= 1.0  # only a long warmup tames it

# %% [markdown]
# ## Weight decay: L2 (Adam) vs decoupled (AdamW, BertAdam)
#
# With a zero gradient, only the decay moves the parameter. Adam's L2 term goes through m/√v, so it
# becomes a full-size step of about lr; AdamW shrinks p by lr·wd·p, as intended.

# %%
decayed_to = {}
for rule in (Adam, AdamW, BertAdam):
    p = Parameter(np.array([1.0]))
    optimizer = rule([p], lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    p.grad = np.zeros(1)
    optimizer.step()
    decayed_to[rule.__name__] = p.data[0]
    print(f"{rule.__name__:>8}: p = 1 -> {p.data[0]:.6f}")
# Adam: a full step of lr = 0.01 against the sign of g = wd·p; the others: p·(1 - lr·wd)
assert np.isclose(decayed_to["Adam"], 1 - 0.01, rtol=1e-6)
assert np.isclose(decayed_to["AdamW"], 1 - 0.01 * 0.01) and np.isclose(decayed_to["BertAdam"], 1 - 0.01 * 0.01)

# %% [markdown]
# ## Which parameters decay: BERT's two groups
#
# Google's `optimization.py` decays every weight matrix and embedding, but not LayerNorm's scale and shift
# nor any bias (`exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"]`): shrinking a gain or an offset
# towards 0 does not make the model simpler, it only moves it off its working point. `bert_param_groups`
# builds the two groups by name; `bert_optimizer`, which every training loop here uses, applies them.

# %%
model = BertModel(BertConfig.preset("tiny", vocab_size=100))
decayed, not_decayed = bert_param_groups(model.named_parameters(), weight_decay=0.01)
print(f"decayed (weight_decay {decayed['weight_decay']}): {len(decayed['names'])} tensors, e.g. "
      f"{decayed['names'][:2]}")
print(f"not decayed (weight_decay {not_decayed['weight_decay']}): {len(not_decayed['names'])} tensors, e.g. "
      f"{not_decayed['names'][:3]}")
assert all("LayerNorm" in name or name.endswith("bias") for name in not_decayed["names"])
assert not any("LayerNorm" in name or name.endswith("bias") for name in decayed["names"])

# %% [markdown]
# ## The first training run: a model that sees its answers learns to copy
#
# The loss reads only the chosen positions, and those positions are hidden behind [MASK] (lesson 08). Why
# hide them? With AdamW in hand (`bert_optimizer` with the run preset's rule, "adamw"), the course's first
# training run can answer it. Train the same tiny model twice for 200 steps on the synthetic stories: once
# with the chosen tokens left visible (the answer sits in the input at the very position asked about), once
# masked as BERT does. Then ask both to fill real blanks in held-out stories they never trained on. (The
# batches come from the data routine of lessons 08 and 09; `minibert/train/pretraining_setup.py` opens them.)

# %%
from minibert import fast  # noqa: E402
from minibert.model import pretraining_loss  # noqa: E402
from minibert.optim import bert_optimizer, clip_grad_norm  # noqa: E402
from minibert.tokenizer import BertTokenizer  # noqa: E402
from minibert.train.pretraining_config import run_preset  # noqa: E402
from minibert.train.pretraining_setup import build_model, open_batches, prepare_data  # noqa: E402

tokenizer = BertTokenizer(course.ROOT / "data" / "synthetic" / "vocab.txt")

run_config = run_preset("tiny", use_nsp=False, steps=200, lr=3e-3, schedule="constant")
shard_dir, _, _ = prepare_data(run_config, course.ROOT / "data" / "synthetic", log=lambda _: None)
train_batches, eval_batches = open_batches(shard_dir, run_config)
held_out = next(eval_batches.epoch(0))


def visible(batch):
    """The batch with every chosen token put back where it was: the answer in plain sight."""
    ids = batch["input_ids"].copy()
    np.put_along_axis(ids, batch["masked_lm_positions"], batch["masked_lm_ids"], axis=1)
    return {**batch, "input_ids": ids}


def run_on(model, batch):
    """The model on a batch of the data routine, its MLM head on the chosen positions only (lesson 10)."""
    return model(batch["input_ids"], batch["segment_ids"], batch["input_mask"],
                 masked_positions=batch["masked_lm_positions"])


def train(show_answers):
    """200 steps at a constant learning rate; (the last step's loss, held-out blanks filled)."""
    model = build_model(run_config, tokenizer.vocab_size)
    optimizer = bert_optimizer(model.named_parameters(), **run_config.optimizer_settings())
    for _, (_, batch) in zip(range(run_config.steps), train_batches.forever(), strict=False):
        batch = visible(batch) if show_answers else batch
        loss = pretraining_loss(run_on(model, batch), batch["masked_lm_ids"], batch["masked_lm_weights"],
                                batch["next_sentence_labels"], use_nsp=False)[0]
        loss.backward()
        clip_grad_norm(model.parameters(), 1.0)  # Google's global norm of 1.0 (the top of this lesson)
        optimizer.step()
        optimizer.zero_grad()
        last_loss = loss.item()
    model.eval()
    guesses = run_on(model, held_out).mlm_logits.data.argmax(-1)  # (B, P): blanks hidden, as in real use
    weights = held_out["masked_lm_weights"] > 0
    return last_loss, float((guesses == held_out["masked_lm_ids"])[weights].mean())


with fast.process_plan(threads=1):  # arrays this small gain nothing from a second thread (minibert/fast)
    copying = train(show_answers=True)
    masking = train(show_answers=False)
answers = held_out["masked_lm_ids"][held_out["masked_lm_weights"] > 0]
commonest = np.bincount(answers).max() / len(answers)  # always guessing the commonest answer word
print(f"answers visible: training loss {copying[0]:.3f}, held-out blanks filled {copying[1]:.1%}")
print(f"answers masked:  training loss {masking[0]:.3f}, held-out blanks filled {masking[1]:.1%}")
print(f"(always guessing the commonest answer, {tokenizer.ids_to_tokens[np.bincount(answers).argmax()]!r}: "
      f"{commonest:.1%})")
# the copier drives its loss to about 0 and does no better on a real blank than the commonest-word guess;
# the masked model learns from the context
assert copying[0] < 0.1 and masking[0] > 1.0
assert copying[1] < commonest + 0.03 and masking[1] > copying[1] + 0.05

# %% [markdown]
# **Exercise 11** (`python -m minibert.exercises start 11`): write `update_moments` (`adam_moments`),
# `bias_corrected_step` (`bias_correction`) and `linear_warmup_linear_decay` (`warmup_decay`).
