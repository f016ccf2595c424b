# %% [markdown]
# # Lesson 15 — question answering with start and end logits
#
# The second fine-tuning picture of the course's article (SQuAD, paper §4.2):
#
#     [CLS] 问题 [SEP] 文章段落 [SEP]  →  BERT  →  for every token: a start logit and an end logit
#
# The answer is a span of the passage: the model points at its first and its last token. The head is one
# Linear(H, 2) applied to every token's final vector (`BertForQuestionAnswering`,
# `minibert/finetune/heads.py`); column 0 scores "the answer starts here", column 1 "it ends here". The
# article says there are no extra parameters; there are 2·H + 2 of them (130 for `tiny`, 1,538 for
# BERT-base), next to nothing.
#
# Three pieces of Google's `run_squad.py` make it work, and this lesson runs each: windows with
# `doc_stride` for passages longer than the model's input, span decoding (the n best starts and ends,
# start ≤ end, a maximum length), and the official EM/F1 after SQuAD's normalisation.

# %%
import shutil
from itertools import pairwise

import course
import numpy as np

from minibert.autograd import no_grad
from minibert.finetune import (
    BertForQuestionAnswering,
    FineTuneConfig,
    best_spans,
    fine_tune,
    make_task,
    normalize_answer,
    squad_exact_match,
    squad_f1,
)
from minibert.finetune.predict import answer
from minibert.finetune.squad_features import question_windows
from minibert.finetune.tasks import data_files
from minibert.model import BertConfig
from minibert.tokenizer import BertTokenizer

SYNTHETIC = course.ROOT / "data" / "synthetic"
tokenizer = BertTokenizer(SYNTHETIC / "vocab.txt")
task = make_task("qa", tokenizer, max_seq_length=128, doc_stride=64)  # tiny reads at most 128 positions
train_path, dev_path = data_files("qa", data_dir=SYNTHETIC)
train, dev = task.read(train_path), task.read(dev_path)
train = train[:1800]  # the first 300 of the 4,000 training passages: enough for tiny, in a short lesson
example = train[0]
(gold_text, gold_start), = example.answers
print(f"{len(train)} training and {len(dev)} dev questions, e.g.")
print(f"  question: {example.question}\n  answer:   {gold_text!r} at character {gold_start}")
print(f"  passage:  {example.context[:90]}... ({len(example.context)} characters)")

# %% [markdown]
# ## Windows: a passage longer than the input
#
# The passage above is longer than what fits beside the question. `run_squad.py` reads it in windows of
# `max_seq_length` tokens whose starts move by `doc_stride` tokens, so they overlap, and an answer cut by
# one window's edge is whole in the next. Here, to see several, windows of 48 tokens with a stride of 16:
#
# - a training window that holds the whole answer points `start_position` and `end_position` at it;
#   one that does not points both at [CLS] (position 0): "no answer here";
# - a token seen in several windows is judged, as an answer start, only in the window where it has the
#   most context on both sides (`max_context`): near an edge the model sees half a sentence.

# %%
windows = question_windows(example, 0, tokenizer, max_seq_length=48, doc_stride=16)
for number, window in enumerate(windows):
    first, last = window.offsets[0][0], window.offsets[-1][1]
    if window.start_position:
        target = tokenizer.convert_ids_to_tokens(window.input_ids[window.start_position:window.end_position + 1])
        target = f"answer at positions {window.start_position}-{window.end_position}: {' '.join(target)}"
    else:
        target = "answer not inside: start = end = 0 ([CLS])"
    owned = sum(window.max_context)
    print(f"window {number}: passage characters {first:>3}-{last:<3} {owned:>2} of {len(window.offsets)} "
          f"tokens scored here;  {target}")
# each window starts doc_stride tokens after the previous one, before that one ends; one holds the whole answer
assert all(after.offsets[0][0] < before.offsets[-1][1] for before, after in pairwise(windows))
assert any(window.start_position for window in windows)
print("window 0 as the model reads it:")
print("  " + " ".join(tokenizer.convert_ids_to_tokens(windows[0].input_ids)))
print("  segment ids: " + "".join(str(segment) for segment in windows[0].segment_ids))

# %% [markdown]
# ## Start and end logits
#
# The model gives every position of every window two numbers. Untrained, they are noise.

# %%
config = BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size)
model = BertForQuestionAnswering(config, seed=0)
print(model, "\nthe head:", model.qa_outputs.weight.shape, "weight,", model.qa_outputs.bias.shape, "bias")
window = windows[0]
model.eval()
with no_grad():
    start_logits, end_logits = model(np.array([window.input_ids]), np.array([window.segment_ids]))
print(f"start_logits {start_logits.shape}, end_logits {end_logits.shape}: one of each per position")
print("first start logits:", np.round(start_logits.data[0, :8], 3))

# %% [markdown]
# ## From logits to a span
#
# `best_spans` (`minibert/finetune/span_decoding.py`) pairs the `n_best_size` best starts with the best
# ends and keeps only the spans that make sense: inside the passage, start ≤ end, at most
# `max_answer_length` tokens; then it ranks them by start_logit + end_logit. Hand-made logits show each
# rule: positions 0-3 are `[CLS] question [SEP]`, the passage is positions 4-11.

# %%
start = np.array([9.0, 0, 8.0, 0, 0, 1.0, 0, 0, 3.0, 0, 0, 0])  # best: [CLS] (0), then the question (2)
end = np.array([0, 0, 0, 0, 0, 0, 7.0, 2.0, 0, 0, 0, 2.5])  # best end (6) lies before start 8
print("start logits", start, "\nend logits  ", end)
kept = best_spans(start, end, passage_start=4, passage_end=11, n_best_size=5, max_answer_length=4)
for span in kept:
    print(f"  span {span.start}-{span.end}  score {span.score:.1f}")
assert all(4 <= span.start <= span.end <= 11 and span.end - span.start < 4 for span in kept)
assert [span.score for span in kept] == sorted((span.score for span in kept), reverse=True)
print("  (0 and 2 are outside the passage; 8-6 ends before it starts; 5-11 is 7 tokens, over the limit 4)")

# %% [markdown]
# ## Scoring an answer: EM and F1 after SQuAD's normalisation
#
# The official script lowercases, drops punctuation and the articles a/an/the, and collapses spaces before
# comparing. Exact match (EM) is then 1 or 0; F1 counts the overlapping words, so a partly right span
# gets partial credit. minibert counts each Chinese character as a word (as CMRC 2018 does), because
# Chinese has no spaces and F1 would otherwise equal EM.

# %%
for prediction, gold in (("The Northwind Trading.", "Northwind Trading"), ("in Cape Town", "Cape Town"),
                         ("Friday", "On Friday"), ("星期五上午", "星期五"), ("Tom", "Ava")):
    print(f"  {prediction!r:>24} vs {gold!r:<20} -> {normalize_answer(prediction)!r:<20} "
          f"EM {squad_exact_match(prediction, [gold]):.0f}  F1 {squad_f1(prediction, [gold]):.2f}")
# articles and punctuation do not count; a partly right span gets partial F1; a wrong one gets 0
assert squad_exact_match("The Northwind Trading.", ["Northwind Trading"]) == 1
assert 0 < squad_f1("in Cape Town", ["Cape Town"]) < 1 and squad_f1("Tom", ["Ava"]) == 0

# %% [markdown]
# ## Fine-tune
#
# Quick mode fine-tunes the random tiny model for three epochs, at a higher learning rate than the tiny
# default (3e-3: it learned faster in a run this short), and scores 120 of the dev questions; `--full`
# trains six epochs and scores all 480. The loss is the mean of the start and the end cross-entropies over
# the positions of each window.

# %%
epochs = 6 if course.FULL else 3
dev = dev if course.FULL else dev[:120]
out_dir = course.OUTPUT / "15_qa"
if out_dir.exists():
    shutil.rmtree(out_dir)  # the log is appended to; this lesson starts over
result = fine_tune(task, model, train, dev, FineTuneConfig(epochs=epochs, learning_rate=3e-3), out_dir=out_dir)
for entry in result.history:
    print(f"epoch {entry['epoch']}: train loss {entry['train_loss']:.3f}  dev EM "
          f"{entry['dev']['exact_match']:.1f}  F1 {entry['dev']['f1']:.1f}")

# %% [markdown]
# ## Answers, one by one
#
# `answer` runs every window of a question, decodes the spans of all windows together, and cuts the text
# out of the passage through the tokens' character offsets, so the answer reads as the passage wrote it.
# The probability of each of the n best is a softmax over their scores. Here are the dev questions about
# one passage.

# %%
passage = dev[0].context
predictions = []
for example in (example for example in dev if example.context == passage):
    best = answer(task, model, example.question, example.context)
    golds = [text for text, _ in example.answers]
    predicted = best[0].text if best else ""
    predictions.append(predicted)
    others = ", ".join(f"{candidate.text!r} {candidate.probability:.0%}" for candidate in best[1:3])
    print(f"{example.question}\n  predicted {predicted!r} ({best[0].probability:.0%}; next: {others})  gold "
          f"{golds[0]!r}  EM {squad_exact_match(predicted, golds):.0f}  F1 {squad_f1(predicted, golds):.2f}")
print(f"\n{len(set(predictions))} different answers to {len(predictions)} questions about this passage")
print(f"dev ({len(dev)} questions): EM {result.best_metrics['exact_match']:.1f}, F1 "
      f"{result.best_metrics['f1']:.1f}; the model is saved in {out_dir.name}/")

# %% [markdown]
# A model trained from random weights for a few seconds learns first where answers tend to be in these
# stories (names, places, days) and only later to read the question: if it gives the same answer to
# different questions above, it is at that stage. `--full` trains six epochs and gets further. Whether a
# pretrained encoder, which has read these stories, gets there sooner is not measured here: the first command
# below fine-tunes lesson 12's model on the whole task, for you to find out. From the command line:
#
#     python -m minibert finetune --task qa --model lessons/output/12_pretrain_run --out runs/qa
#     python -m minibert predict --model lessons/output/15_qa --question "Where does Ava work?" \
#         --context "Ava Wilson and Tom Hall are good friends. Ava works at Northwind Trading."
