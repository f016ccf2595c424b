# %% [markdown]
# # Lesson 12 — pretrain BERT: masked LM + NSP, and watch it learn
#
# Everything of lessons 05-11 now runs together, one step after another (`minibert/train/pretraining_loop.py`):
#
#     batch → model (MLM head on the masked positions only) → MLM loss + NSP loss → backward
#           → clip the gradients to norm 1.0 → AdamW step → next learning rate
#
# The paper (appendix A.2) ran this 1,000,000 times on batches of 256 sequences of up to 512 tokens, four
# days on 16 TPU chips for BERT-base. A laptop gets minutes, so the run presets shrink everything but the
# recipe (`minibert/train/pretraining_config.py` says why each number differs from the paper's):
#
# - quick mode (the default) trains the `tiny` preset, 2 layers of width 64, for 500 steps;
# - `--full` trains `mini`, the 4-layer BERT-Mini (H 256, 4 heads), for 800 steps.
#
# Both are counted in steps, not minutes: what the lesson asserts after them holds on a slow machine as on a
# fast one, which only takes longer (docs/performance.md times every lesson).
#
# Both read the `synthetic` corpus: bilingual stories whose sentences come from a small grammar
# (`data/synthetic/README.md`). The run folder it leaves behind, with its checkpoint, log and curves, is
# what `python -m minibert fill-mask --model DIR` reads, and lessons 14 (`--full`) and 16 too.

# %%
import math
import shutil

import course

from minibert.inspect import fill_mask, load_for_inference
from minibert.train import pretrain, run_preset
from minibert.train.logs import LOG_FILE, read_log
from minibert.train.pretraining_run import open_run
from minibert.viz import line_chart, line_chart_svg
from minibert.viz.text_width import pad_right

if course.FULL:
    # 800 steps: what the `mini` recipe takes to pass 30% held-out MLM accuracy on pydocs (MINI_STEPS_TO_LEARN)
    config = run_preset("mini", corpus="synthetic", steps=800, minutes=None, eval_every=100)
    run_dir = course.OUTPUT / "12_pretrain_run_full"
else:
    config = run_preset("tiny", steps=500, eval_every=100, checkpoint_every=250)
    run_dir = course.OUTPUT / "12_pretrain_run"

# A new run refuses a folder that already holds one (it would have to be resumed); this lesson starts over.
if run_dir.exists():
    shutil.rmtree(run_dir)

# %% [markdown]
# ## The run, before its first step
#
# `open_run` (minibert/train/pretraining_run.py) builds what the run needs: the pretraining data (the corpus, its
# WordPiece vocabulary and the NSP instances of lesson 09, made once and kept under `data/synthetic/build/`),
# the model, AdamW with BERT's weight-decay groups, and the warmup + linear-decay schedule of lesson 11. The
# masks of lesson 08 are drawn anew for every batch (dynamic masking, as RoBERTa does), so no two epochs show
# the same blanks.

# %%
run = open_run(config, run_dir, data_dir=course.ROOT / "data" / "synthetic")
run.lock.release()  # `pretrain` below opens the run again, with this same model at its first step
model_config = run.model.config
print(f"\nmodel: {run.model!r}")
print(f"{'':<24}{'this run':>12}{'BERT-base':>12}  source of BERT-base's figure")
for name, ours, theirs, source in (
        ("layers", model_config.num_hidden_layers, 12, "paper §3"),
        ("hidden size H", model_config.hidden_size, 768, "paper §3"),
        ("heads", model_config.num_attention_heads, 12, "paper §3"),
        ("vocabulary V", model_config.vocab_size, 30_000, "paper §3 (the released vocab.txt: 30,522)"),
        ("batch (sequences)", config.batch_size, 256, "paper A.2"),
        ("tokens per sequence", config.max_seq_length, 512, "paper A.2: 128 for 90% of the steps, then 512"),
        ("masked slots per seq.", config.max_predictions_per_seq, 80,
         "Google's README: about 512 x 0.15 = 76.8, usually rounded up to 80 (20 for 128)"),
        ("peak lr", config.lr, 1e-4, "paper A.2"),
        ("steps", config.steps, 1_000_000, "paper A.2")):
    ours, theirs = (f"{value:,}" if isinstance(value, int) else f"{value:g}" if isinstance(value, float) else value
                    for value in (ours, theirs))
    print(f"{name:<24}{ours:>12}{theirs:>12}  {source}")

# %% [markdown]
# ## What an untrained model guesses
#
# `fill_mask` asks the MLM head for its distribution over the whole vocabulary at each [MASK]. Freshly
# initialised (normal, std 0.02), every token gets about 1/V: nothing is known yet.

# %%
PROBES = ("On Monday, Ethan and Chloe [MASK] to the lake.",  # went
          "小东和小雪是好[MASK]友。",  # 朋 (朋友, friend)
          "小明给小红买了一[MASK]书。")  # 本, the article's example: lesson 13 is about this one


def show_guesses(model, tokenizer):
    """Print the top three guesses at each probe's [MASK]; return the largest probability among them."""
    largest = 0.0
    for text in PROBES:
        guesses = fill_mask(model, tokenizer, text, top_k=3)[0]
        shown = ", ".join(f"{token} {probability:.1%}" for token, probability in guesses)
        print(f"  {pad_right(text, 48)} {shown}")
        largest = max(largest, guesses[0][1])
    return largest


print(f"before training (1/V = {1 / model_config.vocab_size:.2%}):")
untrained_largest = show_guesses(run.model, run.tokenizer)
# about uniform: no token gets five times its 1/V share (std 0.02 keeps every logit near 0)
assert untrained_largest < 5 / model_config.vocab_size, untrained_largest

# %% [markdown]
# ## Train
#
# The run prints one progress line (step, loss, MLM and NSP accuracy on the last batches, learning rate,
# tokens per second, time left), evaluates on held-out stories every few steps, and writes a checkpoint
# you could resume with `python -m minibert pretrain --resume --out DIR`. Ctrl-C stops it cleanly.

# %%
result = pretrain(config, run_dir, data_dir=course.ROOT / "data" / "synthetic", overwrite=True,
                  show_examples=False)

# %% [markdown]
# ## The loss falls from ln V + ln 2
#
# Lesson 10: an untrained MLM head is uniform over V tokens, a loss of ln V, and the NSP head is a coin,
# ln 2. The first step's loss should be their sum; a loss that stays there means the labels never reach
# the loss. (The `mini` recipe of `--full` trains NSP only once its sequences reach full length, so there
# the first steps' loss is ln V alone: docs/learning.md, "A third round".)

# %%
records = read_log(run_dir / LOG_FILE)
train = [record for record in records if record["kind"] == "train"]
evals = [record for record in records if record["kind"] == "eval"]
losses = [loss for record in train for loss in record["losses"]]
steps = list(range(1, len(losses) + 1))
if config.short_phase() is None or config.short_phase_nsp:
    print(f"first step: loss {losses[0]:.3f}  vs  ln V + ln 2 = {math.log(model_config.vocab_size):.3f} + "
          f"{math.log(2):.3f} = {math.log(model_config.vocab_size) + math.log(2):.3f}")
else:
    print(f"first step: loss {losses[0]:.3f}  vs  ln V = {math.log(model_config.vocab_size):.3f} (no NSP yet)")
print(f"last step:  loss {losses[-1]:.3f}, after {result.step} steps\n")
assert result.step == config.steps, result.step  # the whole run: no clock cut it short
start = math.log(model_config.vocab_size) + (math.log(2) if config.short_phase() is None or config.short_phase_nsp
                                             else 0.0)
assert abs(losses[0] - start) < 0.5 and losses[-1] < losses[0] - 2.0  # starts uniform, then learns
loss_curves = {"train loss (MLM + NSP)": (steps, losses),
               "held-out MLM loss": ([r["step"] for r in evals], [r["mlm_loss"] for r in evals])}
print(line_chart(loss_curves, width=64, height=12, title="loss per step"))
course.save("12_loss.svg", line_chart_svg(loss_curves, "pretraining loss", "step", "loss"))

# %% [markdown]
# ## Held-out accuracy: what the paper's readers asked for
#
# Training loss alone cannot tell learning from memorising. Every evaluation reads the same held-out
# stories (never trained on) with the same masks, and counts how often the top guess at a masked slot is
# the hidden token, and how often IsNext/NotNext is right. A guess is 1/V for MLM and 50% for NSP.

# %%
print(f"{'step':>6} {'MLM accuracy':>13} {'MLM loss':>9} {'NSP accuracy':>13}")
for record in evals:
    print(f"{record['step']:>6} {record['mlm_accuracy']:>13.1%} {record['mlm_loss']:>9.3f} "
          f"{record['nsp_accuracy']:>13.1%}")
accuracy_curves = {
    "train MLM": ([r["step"] for r in train], [r["mlm_accuracy"] for r in train]),
    "held-out MLM": ([r["step"] for r in evals], [r["mlm_accuracy"] for r in evals]),
    "held-out NSP": ([r["step"] for r in evals], [r["nsp_accuracy"] for r in evals]),
}
print(line_chart(accuracy_curves, width=64, height=10, title="accuracy"))
course.save("12_accuracy.svg", line_chart_svg(accuracy_curves, "pretraining accuracy", "step", "accuracy"))
tokens_per_second = sum(r["tokens_per_second"] for r in train) / len(train)
print(f"speed: about {tokens_per_second:,.0f} tokens per second")
# held-out accuracy beats the untrained 1/V and the NSP coin by far at the end (the table above prints both)
assert evals[-1]["mlm_accuracy"] > 0.10 and (evals[-1]["nsp_accuracy"] or 0) > 0.6

# %% [markdown]
# NSP rises fast here: a NotNext B of the synthetic corpus is about other people, often in the other
# language, so a few hundred steps learn to spot it (ALBERT's complaint, Lan et al. 2019: the topic alone
# gives NSP away). MLM is harder: first the model learns which tokens are frequent, then which follow which.

# %% [markdown]
# ## What the trained model guesses

# %%
print("after training:")
show_guesses(*load_for_inference(run_dir))

# %% [markdown]
# After 500 steps the tiny model knows the frequent patterns (`went` after two names, 朋 before 友),
# not yet the measure word 本, which only the noun *after* it decides. Lesson 13 trains exactly that blank
# and shows why a left-to-right model cannot learn it. `--full` trains the 4-layer `mini` for 800 steps;
# `python -m minibert pretrain` (the `mini` preset on Python's documentation, 15 minutes) is the real run.
#
# Try it yourself:
#
#     python -m minibert fill-mask --model lessons/output/12_pretrain_run "Ethan and Chloe [MASK] to the zoo."
#     python -m minibert attention --model lessons/output/12_pretrain_run "小东和小雪是好朋友。"
#     python -m minibert pretrain --preset tiny --out runs/tiny       # the whole 800-step tiny run
