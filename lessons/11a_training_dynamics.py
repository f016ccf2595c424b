# %% [markdown]
# # Lesson 11a — training dynamics: why post-LN BERT needs warmup, watched layer by layer
#
# BERT puts each LayerNorm after the residual sum ("post-LN", lesson 05b); GPT-2 and most models since put
# it before the sublayer ("pre-LN"). Xiong et al. 2020 ("On Layer Normalization in the Transformer
# Architecture", ICML) showed that the difference decides whether training needs warmup: post-LN without
# warmup fails at learning rates where pre-LN trains, warmup or not. (Their explanation is the gradient at
# initialisation, largest at the layers nearest the output in post-LN; with Xavier's initialisation, which
# they use. With BERT's std 0.02 the layers' gradients start alike, and here the difference appears during
# the first steps instead.) This lesson trains both kinds, with and without warmup, on a task small enough
# to run in seconds, and watches each layer's activations, gradients and updates while they learn.
#
# Everything runs on the library's own code: the post-LN layer is `EncoderLayer` (`minibert/model/bert.py`), the
# pre-LN layer is built below from the same pieces (`MultiHeadSelfAttention`, `FeedForward`, `Linear`,
# `LayerNorm`), the optimizer is `minibert.optim.AdamW` and the schedule `linear_warmup_linear_decay`.

# %%
from functools import partial

import course
import numpy as np

from minibert import fast
from minibert.model import BertConfig, BertEmbeddings, EncoderLayer
from minibert.model.losses import cross_entropy
from minibert.nn.layers import LayerNorm, Linear
from minibert.nn.module import Module, ModuleList
from minibert.nn.transformer import FeedForward, MultiHeadSelfAttention
from minibert.optim import AdamW, LRScheduler, linear_warmup_linear_decay
from minibert.viz import heatmap, heatmap_svg, line_chart, line_chart_svg

# %% [markdown]
# ## Which warmup
#
# Lesson 11 measured one reason for warmup, the optimizer's: BERT's Adam has no bias correction, and only a
# warmup long against v's horizon of 1/(1-β2) steps (1,000 for BERT's β2 = 0.999) keeps its first steps in
# check. This lesson is about the other reason, the model's, so its runs use AdamW, which is bias-corrected:
# whatever warmup does for them, it is not a repair of Adam's start. A warmup of 1,000 steps does not fit in
# a lesson, so they use β2 = 0.98, RoBERTa's choice for stability (Liu et al. 2019, §3.1), and warm up for
# its horizon, 1/(1-0.98) = 50 steps.
#
# ## The task and the two layers
#
# Eight topics of four words each; a sequence of 16 words draws all its words from one topic, and 15% of
# them are hidden behind [MASK]. Guessing a hidden word from the visible ones brings the loss from ln 33 =
# 3.50 (the vocabulary and [MASK]; at initialisation every word is equally likely) down to ln 4 = 1.39 (the
# four words of the right topic): a masked-LM task of lesson 10's kind that a small model learns in a
# hundred steps.

# %%
TOPICS, WORDS_PER_TOPIC, SEQ_LEN, BATCH = 8, 4, 16, 16
MASK_ID = TOPICS * WORDS_PER_TOPIC  # word ids 0..31, [MASK] 32
FLOOR = np.log(WORDS_PER_TOPIC)  # the best loss possible: the topic is known, the word is not


def topic_batch(rng):
    """(input ids with [MASK]s, the hidden words with -100 elsewhere), each (BATCH, SEQ_LEN)."""
    topic = rng.integers(0, TOPICS, (BATCH, 1))
    words = topic * WORDS_PER_TOPIC + rng.integers(0, WORDS_PER_TOPIC, (BATCH, SEQ_LEN))
    hidden = rng.random((BATCH, SEQ_LEN)) < 0.15
    return np.where(hidden, MASK_ID, words), np.where(hidden, words, -100)


# %% [markdown]
# Post-LN (BERT, `EncoderLayer`) and pre-LN (GPT-2) differ only in where each LayerNorm sits:
#
#     post-LN   x = LN(x + Attn(x));      x = LN(x + FFN(x))
#     pre-LN    x = x + Attn(LN(x));      x = x + FFN(LN(x));   one LN after the last layer
#
# In post-LN every path from the output back to a layer's weights passes through the LayerNorms of all the
# layers above it; in pre-LN the residual stream is a straight road from the loss to every layer.

# %%


class PreLNLayer(Module):
    """x = x + Dense(Attn(LN(x))); x = x + Dense(act(Dense(LN(x)))): the library's pieces, LN moved first."""

    def __init__(self, config, rng):
        super().__init__()
        hidden, std = config.hidden_size, config.initializer_range
        self.attention_norm = LayerNorm(hidden, config.layer_norm_eps)
        self.attention = MultiHeadSelfAttention(hidden, config.num_attention_heads, 0.0, rng, std)
        self.attention_output = Linear(hidden, hidden, rng, std)  # W^O
        self.feed_forward_norm = LayerNorm(hidden, config.layer_norm_eps)
        self.intermediate = FeedForward(hidden, config.intermediate_size, config.hidden_act, rng, std)
        self.output = Linear(config.intermediate_size, hidden, rng, std)  # W₂

    def forward(self, x, mask):
        context, probs = self.attention(self.attention_norm(x), mask)  # (B, S, H), (B, A, S, S)
        x = x + self.attention_output(context)
        return x + self.output(self.intermediate(self.feed_forward_norm(x))), probs


class TopicModel(Module):
    """Embeddings, `depth` layers of one kind, then a Linear to the words' scores at every position."""

    def __init__(self, kind, depth, seed):
        super().__init__()
        config = BertConfig(vocab_size=MASK_ID + 1, hidden_size=32, num_hidden_layers=depth,
                            num_attention_heads=2, intermediate_size=128, max_position_embeddings=SEQ_LEN,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        rng = np.random.default_rng(seed)
        self.embeddings = BertEmbeddings(config, rng)
        layer = EncoderLayer if kind == "post-LN" else PreLNLayer
        self.layer = ModuleList([layer(config, rng) for _ in range(depth)])
        # pre-LN's stream is never normalised inside the stack: one LayerNorm before the head does it
        self.final_norm = LayerNorm(config.hidden_size, config.layer_norm_eps) if kind == "pre-LN" else None
        self.head = Linear(config.hidden_size, MASK_ID, rng, config.initializer_range)  # [MASK] is no answer

    def forward(self, ids):
        """ids (B, S) -> (scores (B, S, 32), each layer's output (B, S, H))."""
        x = self.embeddings(ids, np.zeros_like(ids))  # (B, S, H)
        every_key = np.ones((ids.shape[0], 1, 1, ids.shape[1]), dtype=bool)  # no padding here
        outputs = []
        for layer in self.layer:
            x, _ = layer(x, every_key)
            outputs.append(x.data)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.head(x), outputs


# %% [markdown]
# ## Four runs, and each layer's numbers at every step
#
# Depth 9, AdamW at lr 1e-2 (β2 = 0.98), 150 steps with BERT's linear decay to 0, the same seeds and batches
# for all four. Warmup or none is the only difference between two runs of a kind. Per layer and step we keep
# three numbers, as Karpathy's makemore lessons do: the spread (std) of the layer's output, the norm of its
# weights' gradient, and the size of its update relative to its weights, |Δw|/|w| (his "update:data
# ratio", about 1e-3 in a healthy run).

# %%
DEPTH, LR, STEPS, WARMUP, BETA2 = 9, 1e-2, 150, 50, 0.98


def norm(arrays):
    """The length of all the entries of `arrays` taken as one vector."""
    return float(np.sqrt(sum(float((array ** 2).sum()) for array in arrays)))


def train(kind, warmup, seed):
    """Loss per step and three (STEPS, DEPTH) arrays: output std, gradient norm and |Δw|/|w| per layer."""
    model = TopicModel(kind, DEPTH, seed)
    optimizer = AdamW(model.parameters(), lr=LR, betas=(0.9, BETA2), weight_decay=0.0)
    scheduler = LRScheduler(optimizer, partial(linear_warmup_linear_decay, total_steps=STEPS,
                                               warmup_steps=warmup, variant="huggingface"))
    weights = [[p for name, p in layer.named_parameters() if name.endswith("weight") and p.data.ndim == 2]
               for layer in model.layer]  # each layer's matrices (LayerNorm's and the biases left out)
    rng = np.random.default_rng(seed + 1)  # the batches: the same for every run of this seed
    losses, spread, grad_norm, update_ratio = [], [], [], []
    for _ in range(STEPS):
        ids, targets = topic_batch(rng)
        scores, outputs = model(ids)
        loss = cross_entropy(scores, targets, ignore_index=-100)
        model.zero_grad()
        loss.backward()
        before = [[p.data.copy() for p in layer] for layer in weights]
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        spread.append([output.std() for output in outputs])
        grad_norm.append([norm(p.grad for p in layer) for layer in weights])
        update_ratio.append([norm(p.data - old for p, old in zip(layer, olds, strict=True)) / norm(olds)
                             for layer, olds in zip(weights, before, strict=True)])
    return np.array(losses), np.array(spread), np.array(grad_norm), np.array(update_ratio)


def run_name(kind, warmup):
    return f"{kind}, {'warmup' if warmup else 'no warmup'}"


def last_steps(curve):
    return float(curve[-20:].mean())  # the last 20 steps' mean loss


with fast.process_plan(threads=1):  # arrays this small gain nothing from a second thread (minibert/fast)
    results = {run_name("post-LN", warmup): train("post-LN", warmup, seed=1) for warmup in (0, WARMUP)}
post_cold, post_warm = (last_steps(results[run_name("post-LN", warmup)][0]) for warmup in (0, WARMUP))
print(f"post-LN, last 20 steps: {post_cold:.2f} without warmup, {post_warm:.2f} with (floor {FLOOR:.2f})")
# post-LN without warmup stalls far above the floor; warmup rescues it (checked before pre-LN's runs)
assert post_cold > FLOOR + 1.0 and post_warm < post_cold - 0.5
with fast.process_plan(threads=1):
    results.update({run_name("pre-LN", warmup): train("pre-LN", warmup, seed=1) for warmup in (0, WARMUP)})
losses = {name: result[0] for name, result in results.items()}
xs = np.arange(1, STEPS + 1)
print(line_chart({name: (xs, curve) for name, curve in losses.items()}, width=64, height=14,
                 title=f"loss per step, depth {DEPTH}, lr {LR:g} (floor ln 4 = {FLOOR:.2f})"))
course.save("11a_losses.svg", line_chart_svg({name: (xs, curve) for name, curve in losses.items()},
                                             f"post-LN and pre-LN, with and without warmup: depth {DEPTH}",
                                             "step", "masked-word loss"))
final = {name: last_steps(curve) for name, curve in losses.items()}
for name, value in final.items():
    print(f"{name:>22}: loss over the last 20 steps {value:.2f}, {value - FLOOR:+.2f} from the floor")
pre_cold, pre_warm = final["pre-LN, no warmup"], final["pre-LN, warmup"]
# pre-LN learns without warmup, and with it reaches the floor
assert pre_cold < post_cold - 0.5
assert pre_warm < FLOOR + 0.3

# %% [markdown]
# The depth, the learning rate and the seed were chosen by trying. At depth 9 and lr 1e-2, post-LN without
# warmup stalled for every seed tried (0 to 3), and pre-LN trained with or without warmup (without it, one
# seed of the four ended halfway, which is why the asserts compare pre-LN without warmup with post-LN and not
# with the floor). Post-LN with 50 warmup steps trained for seeds 0 and 1 but stalled for seed 2; with 100 it
# trained for seed 2 as well, more slowly. At depth 6, or at lr 5e-3, the four runs end alike: the trouble
# needs both depth and a large step. Xiong et al. saw the same at BERT's size: post-LN without warmup fails
# at lr 1e-3 and pre-LN trains without it, and faster.
#
# ## Layer by layer
#
# What went wrong is visible in the numbers kept per layer: two maps per run show each layer (rows, layer
# 1 nearest the input) every 10 steps (columns), each kind of map on one scale for all four runs.

# %%
SHOWN = np.arange(0, STEPS, 10)  # every 10th step
step_labels = [str(step + 1) for step in SHOWN]
layer_labels = [f"layer {index + 1}" for index in range(DEPTH)]
largest_grad = max(float(result[2].max()) for result in results.values())
for name, (_, _, grad_norm, update_ratio) in results.items():
    slug = name.replace(", ", "_").replace(" ", "_")
    log_ratio = np.log10(np.maximum(update_ratio[SHOWN], 1e-4)).T  # (DEPTH, shown steps); 0 shows as 1e-4
    print(heatmap(log_ratio, layer_labels, step_labels, f"{name}: log10 |Δw|/|w|", value_range=(-4, 0)))
    print(heatmap(grad_norm[SHOWN].T, layer_labels, step_labels, f"{name}: gradient norm",
                  value_range=(0, largest_grad)))
    course.save(f"11a_update_ratio_{slug}.svg", heatmap_svg(log_ratio, layer_labels, step_labels,
                                                            f"{name}: log10 |Δw|/|w|", value_range=(-4, 0)))
    course.save(f"11a_gradient_norm_{slug}.svg", heatmap_svg(grad_norm[SHOWN].T, layer_labels, step_labels,
                                                             f"{name}: gradient norm",
                                                             value_range=(0, largest_grad)))

# %% [markdown]
# In numbers, per run: the update:data ratio over the first 10 steps (the mean over those steps of its
# median over the layers), the gradient reaching layer 1 as a share of the top layer's over the last 50 steps
# (the median), and the spread of layer 1's and the top layer's outputs at the end.

# %%
print(f"{'':>22} {'|Δw|/|w| steps 1-10':>20} {'grad layer 1 / top':>19} {'std layer 1':>12} {'std top':>8}")
summary = {}
for name, (_, spread, grad_norm, update_ratio) in results.items():
    early = float(np.median(update_ratio[:10], axis=1).mean())
    reaching = float(np.median(grad_norm[-50:, 0] / grad_norm[-50:, -1]))
    summary[name] = early, reaching, float(spread[-1, 0]), float(spread[-1, -1])
    print(f"{name:>22} {early:>20.3f} {reaching:>19.4f} {spread[-1, 0]:>12.2f} {spread[-1, -1]:>8.2f}")
cold, warm = summary["post-LN, no warmup"], summary["post-LN, warmup"]
first_update = float(np.median(results["post-LN, no warmup"][3][0]))
print(f"the first update without warmup: |Δw|/|w| = {first_update:.2f} (median over the layers)")
# without warmup AdamW's first step moves every weight by about lr = 1e-2, half of a weight drawn with std
# 0.02; warmup starts the steps near 0 and keeps the first ten several times smaller
assert first_update > 0.3 and cold[0] > 5 * warm[0]
# post-LN without warmup: layer 1 gets almost no gradient any more; with warmup it gets a fair share
assert cold[1] < 0.1 * warm[1]
first_grads = results["post-LN, no warmup"][2][0]  # (DEPTH,): the gradient norms before any update
print(f"post-LN at step 1, before any update: gradient norm per layer from {first_grads.min():.4f} to "
      f"{first_grads.max():.4f} (BERT's std 0.02: the layers start alike)")
assert first_grads.max() < 1.5 * first_grads.min()
# pre-LN's residual stream grows up the stack (each layer adds to it); post-LN normalises it at every layer
for name in ("pre-LN, no warmup", "pre-LN, warmup"):
    assert summary[name][3] > 2 * summary[name][2]
assert max(cold[2:] + warm[2:]) < 2

# %% [markdown]
# What the numbers say:
#
# - **The first steps are huge.** Adam moves every entry by about the learning rate whatever its gradient
#   (lesson 11), and BERT's weights start at std 0.02: at lr 1e-2 the first update changes each weight by
#   half its size (Karpathy's rule of thumb for a healthy update:data ratio is about 1e-3). Both kinds take
#   these steps without warmup; warmup makes them small while every layer's weights are still random.
# - **Post-LN then loses its lower layers.** After those first steps, the gradient that reaches layer 1 of
#   the post-LN run without warmup falls to almost nothing and stays there. Only the top layers keep
#   learning, and the loss stalls; with warmup the same model's gradients reach every layer. Why: every
#   LayerNorm on the way down divides the gradient by the spread of its input, and once large steps have
#   made the sublayers' outputs large beside the residual, each LayerNorm passes on a smaller share of it
#   (Liu et al. 2020, "Understanding the Difficulty of Training Transformers", analyse this dependence on
#   the residual branch; this lesson measures only its outcome, layer 1's share of the gradient).
# - **Pre-LN keeps a straight road.** Its residual stream is never normalised inside the stack, so the
#   gradient of the loss reaches layer 1 through the sum x + ... without passing any LayerNorm; layer 1's
#   share of the gradient stays at or above the top's. The price is the stream's growth up the stack, the
#   spread drawn at initialisation in lesson 05b, here after training.
#
# BERT's recipe (post-LN, BertAdam, 10,000 warmup steps of 1,000,000) warms up for ten times 1/(1-β2), long
# enough for both reasons: the bias correction BertAdam leaves out (lesson 11), and post-LN's first steps.
