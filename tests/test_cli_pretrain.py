"""Tests for the `pretrain`, `fill-mask` and `attention` commands, run as a user runs them: in a separate
process. They cover what only a real process shows: Ctrl-C (SIGINT) stopping cleanly and saving, a kill
in the middle of writing a checkpoint, exit codes and one-line error messages. The process sends itself the signal
at a chosen point (helpers.Child), so it lands at a known step, not at a moment.

Every run is the `tiny` preset on the small synthetic corpus of helpers.make_small_corpus, a few dozen steps at most.
"""

import os
import signal

import pytest
from helpers import SMALL, Child, finished, make_small_corpus, minibert, quiet, small_options, step_losses

from minibert.train.checkpointing import load_checkpoint
from minibert.train.pretraining_config import run_preset
from minibert.train.pretraining_loop import pretrain


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_small_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def run_folder(corpus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs") / "tiny"
    code, stdout, stderr = finished(minibert("pretrain", *small_options(corpus, steps=4, eval_every=2),
                                             "--out", folder))
    assert code == 0, stderr
    return folder, stdout, stderr


def test_pretrain_writes_a_run_folder_and_shows_masks_filled(run_folder):
    """The command trains, evaluates on held-out data, writes checkpoint, vocabulary, log and curves, and
    ends by showing the model's guesses for masked held-out text."""
    folder, stdout, stderr = run_folder
    assert "held-out MLM accuracy" in stdout and f"run folder: {folder}" in stdout
    for name in ("checkpoint.npz", "vocab.txt", "log.jsonl", "loss.svg", "accuracy.svg"):
        assert (folder / name).is_file(), name
    assert "how the model fills masks" in stderr and "[MASK] ->" in stderr and "(answer: " in stderr
    assert "speed layer on" in stderr  # the command says how it trains
    assert load_checkpoint(folder / "checkpoint.npz").position.step == 4


def test_fill_mask_and_attention_commands_read_a_run_folder(run_folder, tmp_path):
    """fill-mask prints a block per [MASK] with k candidates; attention prints every head and writes an
    SVG."""
    folder, _, _ = run_folder
    code, stdout, stderr = finished(minibert("fill-mask", "--model", folder, "--top-k", "3",
                                             "anna [MASK] a little [MASK] .", "小明给小红[MASK]一本书。"))
    assert code == 0, stderr
    assert stdout.count("[MASK] 1 of 2:") == 1 and stdout.count("[MASK] 2 of 2:") == 1
    assert stdout.count("[MASK] 1 of 1:") == 1 and stdout.count("%") == 9
    svg = tmp_path / "attention.svg"
    code, stdout, stderr = finished(minibert("attention", "--model", folder, "anna felt tired .",
                                             "--svg", svg))
    assert code == 0, stderr
    assert "layer 0, head 0" in stdout and "layer 1, head 1" in stdout and svg.is_file()


@pytest.mark.parametrize("arguments, words", [
    (["fill-mask", "--model", "{run}", "nothing to guess"], "no [MASK] in 'nothing to guess'"),
    (["fill-mask", "--model", "{run}/missing", "a [MASK]"], "does not exist"),
    (["pretrain", "--preset", "huge"], "unknown run preset 'huge'"),
    (["pretrain", "--resume", "--out", "{empty}"], "no checkpoint to resume"),
    (["pretrain", "--resume", "--out", "{run}", "--lr", "0.5"], "the checkpoint was made with lr=0.003"),
    (["pretrain", "--preset", "tiny", "--max-seq-length", "1000", "--out", "{empty}"],
     "exceeds the 'tiny' model's max_position_embeddings=128"),
    (["pretrain", "--preset", "tiny", "--batch-size", "0", "--out", "{empty}"], "--batch-size: 0"),
])
def test_bad_input_gets_one_clear_line_and_exit_code_2(run_folder, tmp_path, arguments, words):
    """Each mistake ends the command before any training with `error: ...` naming the problem."""
    folder, _, _ = run_folder
    arguments = [argument.format(run=folder, empty=tmp_path / "empty") for argument in arguments]
    code, _, stderr = finished(minibert(*arguments))
    assert code == 2 and stderr.startswith("error: ") and words in stderr, stderr
    assert "Traceback" not in stderr and not (tmp_path / "empty" / "log.jsonl").exists()


def test_ctrl_c_saves_and_resume_continues_bit_exactly(corpus, tmp_path):
    """SIGINT once step 3 is done: the command finishes that step, saves it, and exits with 130. --resume
    then trains the remaining steps, and every loss equals that of a run that was never interrupted."""
    options = small_options(corpus, steps=30, log_every=1, eval_every=10, checkpoint_every=1000)
    folder = tmp_path / "interrupted"
    code, stderr = Child(["pretrain", *options, "--out", str(folder)], "SIGINT", after_step=3).finish()
    assert code == 130 and "Ctrl-C" in stderr and "continue with: --resume" in stderr, stderr
    assert load_checkpoint(folder / "checkpoint.npz").position.step == 3
    code, _, stderr = finished(minibert("pretrain", "--resume", "--out", folder, "--data-dir", corpus.parent))
    assert code == 0, stderr
    config = run_preset("tiny", corpus=str(corpus), steps=30, log_every=1, eval_every=10,
                        checkpoint_every=1000, **SMALL)
    pretrain(config, tmp_path / "straight", data_dir=corpus.parent, **quiet())
    assert step_losses(folder) == step_losses(tmp_path / "straight")


def test_killing_the_process_while_it_writes_a_checkpoint_keeps_the_last_good_one(corpus, tmp_path):
    """SIGKILL halfway through writing the step-2 checkpoint (its temporary file exists): the step-1
    checkpoint still loads, and --resume starts from it and cleans the temporary file up. The resumed run
    is given half the time the killed one already trained, so it stops at once on any machine."""
    folder = tmp_path / "killed"
    child = Child(["pretrain", *small_options(corpus, steps=10, checkpoint_every=1), "--out", str(folder)],
                  "SIGKILL", in_save=2)
    assert child.finish()[0] == -signal.SIGKILL and "signalled" in child.marks
    assert [name for name in os.listdir(folder) if name.endswith(".tmp")]
    checkpoint = load_checkpoint(folder / "checkpoint.npz")
    assert checkpoint.position.step == 1
    minutes = checkpoint.position.elapsed_seconds / 120
    code, _, stderr = finished(minibert("pretrain", "--resume", "--out", folder, "--data-dir", corpus.parent,
                                        "--minutes", repr(minutes)))
    assert code == 0 and "time limit" in stderr, stderr
    assert not [name for name in os.listdir(folder) if name.endswith(".tmp")]
    assert load_checkpoint(folder / "checkpoint.npz").position.step == checkpoint.position.step
