# %% [markdown]
# # Lesson 14 — fine-tune a classifier on [CLS]
#
# The course article's picture of fine-tuning (docs/background.md), which is all of it:
#
#     [CLS] 这 部 电 影 真 好 看 [SEP]  →  BERT  →  the vector at [CLS] (H numbers)
#                                       →  Linear(H, 2)  →  softmax  →  positive / negative
#
# BERT adds **one** layer to the pretrained encoder and trains everything, encoder included, for a few
# epochs (paper §4, Figure 4). What reaches the new layer is the *pooled* [CLS] vector: the pooler, a
# tanh Dense layer on position 0, tanh(Dense(h_[CLS])), whose output the NSP head reads in pretraining (lesson
# 06a builds it; lesson 09 makes the sentence pairs it is trained on). [CLS] has no meaning of
# its own; attention lets it gather whatever the task needs from every other token.
#
# The head is `BertForSequenceClassification` (`minibert/finetune/heads.py`), the loop `fine_tune`
# (`minibert/finetune/loop.py`), the task the synthetic sentiment set: 2,000 training and 500 dev sentences
# in Chinese and English, where negation, double negation and "although ..., ..." decide the label, so no
# single word gives it away (`data/synthetic/README.md`).

# %%
import math
import shutil

import course
import numpy as np

from minibert import functional as F
from minibert.autograd import no_grad
from minibert.finetune import BertForSequenceClassification, FineTuneConfig, fine_tune, make_task
from minibert.finetune.predict import classify
from minibert.finetune.tasks import data_files
from minibert.model import BertConfig
from minibert.tokenizer import BertTokenizer
from minibert.train import pretrain, run_preset
from minibert.train.logs import LOG_FILE, read_log
from minibert.viz import line_chart, line_chart_svg
from minibert.viz.text_width import pad_right

SYNTHETIC = course.ROOT / "data" / "synthetic"
tokenizer = BertTokenizer(SYNTHETIC / "vocab.txt")
task = make_task("sentiment", tokenizer)
train_path, dev_path = data_files("sentiment", data_dir=SYNTHETIC)
train, dev = task.read(train_path), task.read(dev_path)
task.fit_labels(train)  # label ids in sorted order of the names: negative 0, positive 1
print(f"{len(train)} training and {len(dev)} dev sentences; labels {task.labels}")
for example in train[:4]:
    print(f"  {pad_right(example.text_a, 60)} {example.label}")

# %% [markdown]
# ## The model: a tiny BERT and one new Linear layer
#
# Here the encoder starts from random weights; the fine-tuning section below sets it against a pretrained
# one. `set_labels` writes the label names into the config, as HuggingFace's `id2label`, so they travel
# with the saved model.

# %%
config = BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size)
BertForSequenceClassification.set_labels(config, task.labels)
model = BertForSequenceClassification(config, seed=0)
print(model)
print(f"the new layer: classifier.weight {model.classifier.weight.shape}, classifier.bias "
      f"{model.classifier.bias.shape}: {model.classifier.weight.data.size + model.classifier.bias.data.size} "
      f"of the {model.num_parameters():,} parameters")

# %% [markdown]
# ## One sentence through it, by hand
#
# The same numbers `model(...)` computes, step by step: the encoder's output at position 0, the pooler,
# the classifier, the softmax. Untrained, the two probabilities are close to 50/50.

# %%
SEED_SENTENCE = "这部电影真好看"
encoded = tokenizer.encode(SEED_SENTENCE)
print("tokens:", " ".join(tokenizer.convert_ids_to_tokens(encoded["input_ids"])))
input_ids, segment_ids = np.array([encoded["input_ids"]]), np.array([encoded["token_type_ids"]])
model.eval()  # no dropout, so the two computations below agree exactly
with no_grad():
    output = model.bert(input_ids, segment_ids)
    cls_vector = output.sequence_output.data[0, 0]  # (H,): the encoder's vector at [CLS]
    pooled = model.bert.pooler(output.sequence_output)  # (1, H): tanh(W·h_[CLS] + b)
    logits = model.classifier(pooled)  # (1, 2)
    probabilities = F.softmax(logits).data[0]
    same = np.allclose(logits.data, model(input_ids, segment_ids).data)
print(f"h_[CLS]   {np.round(cls_vector[:6], 3)} ... ({cls_vector.size} numbers)")
print(f"pooled    {np.round(pooled.data[0, :6], 3)} ... (tanh keeps it in (-1, 1))")
print(f"logits    {np.round(logits.data[0], 4)}  ->  softmax "
      + ", ".join(f"{label} {p:.1%}" for label, p in zip(task.labels, probabilities, strict=True)))
print(f"model(...) gives the same logits: {same}")
pooler, classifier = model.bert.pooler.dense, model.classifier
assert np.allclose(pooled.data[0], np.tanh(cls_vector @ pooler.weight.data.T + pooler.bias.data), atol=1e-6)
assert same and np.allclose(logits.data[0], pooled.data[0] @ classifier.weight.data.T + classifier.bias.data,
                            atol=1e-6)
assert np.all(np.abs(probabilities - 0.5) < 0.1)  # untrained: close to 50/50

# %% [markdown]
# ## What pretraining is worth, when task data is scarce
#
# The article's claim: pretraining is what lets fine-tuning work with little labelled data. Here it is
# measured. A `tiny` encoder pretrained for 500 steps on the synthetic stories (lesson 12's quick run, made
# here with a fixed step count; about 20 s), and the same architecture from random weights, are each
# fine-tuned on the first 400 training sentences, with the same recipe and seed. The stories contain
# opinions written like the task's ("这 部 电影 一点 也 不 感人"), so MLM has seen negation and contrast in
# context; the sentiment labels it has never seen.
#
# The recipe: the paper's batch 32 and a few epochs (appendix A.3, which keeps the pretraining optimizer),
# with Google's run_classifier.py for the rest: Adam with decoupled weight decay, linear warmup over 10% of
# the steps then decay; the dev set is scored after each epoch and the best epoch kept. Two things change
# for a small model on a small set: the learning rate (the paper's 2e-5 to 5e-5 suits BERT-base; `tiny`,
# H 64, learns at 1e-3, `default_learning_rate`), and the number of epochs: 3 epochs of 400 sentences are
# 39 steps, so the default runs more, until there are at least 500 steps or 20 epochs
# (`minibert/finetune/plateau.py` says why).

# %%
SMALL = 400
pretrained_dir = course.OUTPUT / "14_pretrained_tiny"
if not (pretrained_dir / "checkpoint.npz").is_file():
    if pretrained_dir.exists():
        shutil.rmtree(pretrained_dir)  # a run stopped half-way: start it again
    pretrain(run_preset("tiny", steps=500, eval_every=250, checkpoint_every=500), pretrained_dir,
             data_dir=course.ROOT / "data" / "synthetic", show_examples=False)
small_runs = {}
for start in ("pretrained", "random"):
    encoder = (BertForSequenceClassification.from_pretrained(pretrained_dir, labels=task.labels)
               if start == "pretrained" else BertForSequenceClassification(config, seed=0))
    small_runs[start] = fine_tune(task, encoder, train[:SMALL], dev, FineTuneConfig(seed=0))
print(f"\n{SMALL} training sentences, {len(dev)} dev sentences; dev accuracy after each epoch:")
print(f"{'epoch':>5} {'pretrained':>11} {'random':>8}")
for pretrained_entry, random_entry in zip(small_runs["pretrained"].history, small_runs["random"].history,
                                          strict=True):
    print(f"{pretrained_entry['epoch']:>5} {pretrained_entry['dev']['accuracy']:>11.1%} "
          f"{random_entry['dev']['accuracy']:>8.1%}")
best = {start: run.best_metrics["accuracy"] for start, run in small_runs.items()}
print(f"best: pretrained {best['pretrained']:.1%}, random {best['random']:.1%}: pretraining is worth "
      f"{100 * (best['pretrained'] - best['random']):+.1f} points here")
# the point of the lesson: on scarce data the pretrained start ends ahead, by more than 3 points (the line
# above prints by how much this run measured)
assert best["pretrained"] > best["random"] + 0.03, best

# %% [markdown]
# The gap depends on whether pretraining read the task's words in context, as the synthetic stories hold the
# sentiment set's. tests/test_learning_claims.py asserts the same question on 150 NER sentences, over
# pretraining seeds; docs/experiments.md's `pretraining-worth` experiment asks it on real text the small
# model's corpus does not resemble, and there pretraining is worth nothing measurable.
#
# ## Fine-tune on the whole set, from random weights
#
# With all 2,000 sentences the random encoder learns the task too (above 90% dev accuracy, asserted below):
# this synthetic task is small and regular enough. Its progress line shows on the terminal as it runs.

# %%
out_dir = course.OUTPUT / "14_sentiment"
if out_dir.exists():
    shutil.rmtree(out_dir)  # the log is appended to; this lesson starts over
result = fine_tune(task, model, train, dev, FineTuneConfig(), out_dir=out_dir)

print(f"{'epoch':>5} {'train loss':>11} {'dev accuracy':>13} {'F1':>7} {'Matthews':>9}")
for entry in result.history:
    dev_scores = entry["dev"]
    print(f"{entry['epoch']:>5} {entry['train_loss']:>11.4f} {dev_scores['accuracy']:>13.1%} "
          f"{dev_scores['f1']:>7.3f} {dev_scores['matthews']:>9.3f}")
print(f"best: epoch {result.best_epoch}, dev accuracy {result.best_metrics['accuracy']:.1%} "
      f"({result.seconds:.0f} s); saved in {out_dir.name}/ as a HuggingFace folder")
assert result.best_metrics["accuracy"] > 0.9  # enough data: random weights learn the task as well

# %% [markdown]
# The loss sits at ln 2 = 0.693 (a coin) over the first epoch, then drops (both asserted below): a random
# encoder's [CLS] vector says little about the sentence until attention has learned to gather the words that
# matter, negations included. How many epochs the plateau lasts varies with the seed; the paper's 3 epochs
# (189 steps here) may end on it, so the default trains longer (`plateau.py`), and a run that ends at chance
# prints a warning that says so and what to try.
# Matthews correlation is 0 for a model that always says one label, whatever the label balance (GLUE
# reports it for CoLA for that reason).

# %%
records = read_log(out_dir / LOG_FILE)
curves = {"train loss": ([r["step"] for r in records if r["kind"] == "train"],
                         [r["loss"] for r in records if r["kind"] == "train"]),
          "dev error (1 - accuracy)": ([r["step"] for r in records if r["kind"] == "eval"],
                                       [1 - r["dev"]["accuracy"] for r in records if r["kind"] == "eval"])}
print(line_chart(curves, width=64, height=10, title="fine-tuning on [CLS]"))
losses = [entry["train_loss"] for entry in result.history]
print(f"train loss by epoch: {', '.join(f'{loss:.3f}' for loss in losses)}; ln 2 = {math.log(2):.3f}")
# a coin at first (the mean over epoch 1 is ln 2 to within 0.02), then well below it
assert abs(losses[0] - math.log(2)) < 0.02 and losses[-1] < 0.5 * math.log(2)
course.save("14_finetune_curve.svg", line_chart_svg(curves, "sentiment fine-tuning", "step", "loss / error"))

# %% [markdown]
# ## New sentences
#
# `classify` encodes text exactly as the training examples were, and returns the probability of each
# label. Sentences the model saw in training are marked; in the "although" sentences the second clause
# decides.

# %%
NEW = ("这部电影真好看", "这个手机没有想象中那么贵", "虽然这本书很难懂，但是这部电影非常感人",
       "虽然这部电影非常感人，但是这本书很难懂", "I thought the book was very exciting.",
       "The song was not annoying at all.", "Although the food was really awful, the trip was fun.")


def bare(text):
    return text.rstrip("。！.!")  # the sets end sentences with or without a full stop or "!"


seen = {bare(example.text_a) for example in train}
for text, (label, scores) in zip(NEW, classify(task, model, NEW), strict=True):
    note = "  (in the training set)" if bare(text) in seen else ""
    print(f"  {pad_right(text, 56)} {label:<9} {scores[label]:6.1%}{note}")

# %% [markdown]
# And where it still goes wrong on dev, if anywhere:

# %%
dev_scores = task.scores(model, task.encode(dev))  # (N, 2) probabilities
wrong = [(example, task.labels[int(row.argmax())]) for example, row in zip(dev, dev_scores, strict=True)
         if task.labels[int(row.argmax())] != example.label]
print(f"{len(wrong)} of {len(dev)} dev sentences wrong")
for example, predicted in wrong[:5]:
    print(f"  {pad_right(example.text_a, 60)} gold {example.label}, predicted {predicted}")

# %% [markdown]
# The same from the command line, and the saved model on your own sentences:
#
#     python -m minibert finetune --task sentiment --model lessons/output/14_pretrained_tiny --out runs/sentiment
#     python -m minibert predict --model lessons/output/14_sentiment "这部电影真好看"
