"""Tests for minibert.train: the pretraining loop, checkpoints and resuming, evaluation, logs, progress,
fill-mask and the attention view.

Runs are tiny (the `tiny` model, 32-token sequences, batches of 8, a few steps) on a small corpus built
once per session from the synthetic grammar, so the whole file runs in well under a minute.
"""

import dataclasses
import hashlib
import io
import json
import math
import os
import re
import signal
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from helpers import quiet, small_config, step_losses
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.errors import CheckpointError, ConfigError, DataError, ShapeError, TokenizerError
from minibert.fast import process_plan
from minibert.finetune.finetuning_run import fit_pretrained_length
from minibert.finetune.tasks import make_task
from minibert.inspect.attention_view import attention_maps, attention_svg, attention_text, tile_svgs
from minibert.inspect.fill_mask import fill_mask
from minibert.inspect.model_folder import load_for_inference, pretrained_length
from minibert.inspect.sentence_encoder import SentenceEncoder
from minibert.model import BertConfig, BertForPreTraining
from minibert.optim import bert_optimizer
from minibert.tokenizer import BertTokenizer
from minibert.train import pretraining_loop as pretrain_module
from minibert.train import pretraining_setup, step_plan
from minibert.train import update as update_module
from minibert.train.checkpointing import (
    PretrainingPosition,
    keep_weights_only,
    load_checkpoint,
    load_run_config,
    restore,
    save_checkpoint,
)
from minibert.train.evaluate import evaluate
from minibert.train.guesses import masked_examples
from minibert.train.interrupt import StopRequest
from minibert.train.logs import TrainingLog, draw_curves, read_log
from minibert.train.metrics import masked_lm_correct, next_sentence_correct
from minibert.train.pretraining_config import MINI_STEPS_TO_LEARN, PretrainingConfig, run_preset
from minibert.train.pretraining_loop import pretrain
from minibert.train.pretraining_run import batch_stream, open_run
from minibert.train.progress import ProgressLine, format_duration, progress_text
from minibert.train.step_plan import REPLAN_EVERY, REPLAN_WINDOW, PretrainingClock
from minibert.train.update import TrainingDiverged, train_step

# ----- the training step -----

def test_tiny_model_overfits_a_handful_of_sequences(small_corpus):
    """Four sequences, seen again and again, are learned by heart: MLM + NSP loss falls to near zero.
    A sign error in a gradient, a wrong label or a broken optimizer step keeps the loss high."""
    config = small_config(small_corpus, lr=3e-3, schedule="constant", steps=100)
    shard_dir, vocab_path, _ = pretraining_setup.prepare_data(config, small_corpus.parent, log=lambda _: None)
    train_batches, _ = pretraining_setup.open_batches(shard_dir, config)
    batch = {name: values[:4] for name, values in next(train_batches.epoch(0)).items()}  # fixed masks
    model = pretraining_setup.build_model(config, BertTokenizer(vocab_path).vocab_size)
    optimizer = bert_optimizer(model.named_parameters(), **config.optimizer_settings())
    scheduler = pretraining_setup.build_scheduler(optimizer, config, config.steps)
    with process_plan(1):
        results = [train_step(model, model.parameters(), optimizer, scheduler, batch, config)
                   for _ in range(100)]
    assert results[0].loss > 5.0  # about ln(vocab) + ln(2) at the start
    assert results[-1].loss < 0.05
    assert results[-1].mlm_right == results[-1].mlm_total and results[-1].nsp_right == 4


def test_non_finite_loss_stops_before_the_weights_change(small_corpus, tmp_path, monkeypatch):
    """A NaN in the weights makes the loss NaN: the run stops naming the step and the last good checkpoint,
    and that checkpoint still loads. (The NaN enters as a damaged weight would, through the training step's
    forward pass, after a resume from the step-3 checkpoint.)"""
    config = small_config(small_corpus, steps=10)
    pretrain(config, tmp_path / "run", data_dir=small_corpus.parent, stop_after_steps=3, **quiet())
    real_forward_batch = update_module.forward_batch

    def with_a_nan_weight(model, batch):
        model.bert.embeddings.word_embeddings.weight.data[:] = np.nan
        return real_forward_batch(model, batch)

    monkeypatch.setattr(update_module, "forward_batch", with_a_nan_weight)
    with pytest.raises(TrainingDiverged) as error:
        pretrain(None, tmp_path / "run", resume=True, data_dir=small_corpus.parent, **quiet())
    message = str(error.value)
    assert "step 4" in message and "checkpoint.npz (step 3)" in message and "--lr" in message
    assert "word_embeddings" in message
    assert load_checkpoint(tmp_path / "run" / "checkpoint.npz").position.step == 3


# ----- determinism and resuming -----

def test_same_seed_same_run_and_another_seed_another(small_corpus, tmp_path):
    """Two runs with one seed log the same losses bit for bit; another seed gives other losses."""
    config = small_config(small_corpus, steps=5, dropout=0.1)
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        pretrain(config.replace(seed=seed), tmp_path / name, data_dir=small_corpus.parent, **quiet())
    assert step_losses(tmp_path / "a") == step_losses(tmp_path / "b")
    assert len(step_losses(tmp_path / "a")) == 5
    assert step_losses(tmp_path / "a") != step_losses(tmp_path / "c")


def test_resume_after_a_pause_gives_bit_identical_losses(small_corpus, tmp_path):
    """Stop after 5 of 9 steps, resume: every loss, the final weights, Adam's moments, the generator state,
    the data position and the held-out figures equal a run that never stopped. Dropout is on, so the random
    state must come back too; the pause falls mid-epoch, between checkpoints (every 3 steps) and between
    evaluations (every 4)."""
    config = small_config(small_corpus, steps=9, dropout=0.1)
    straight = pretrain(config, tmp_path / "straight", data_dir=small_corpus.parent, **quiet())
    paused = pretrain(config, tmp_path / "paused", data_dir=small_corpus.parent, stop_after_steps=5,
                      **quiet())
    assert paused.stopped == "paused" and paused.step == 5
    resumed = pretrain(None, tmp_path / "paused", resume=True, data_dir=small_corpus.parent, **quiet())
    assert resumed.step == 9
    assert step_losses(tmp_path / "paused") == step_losses(tmp_path / "straight")
    final = {name: load_checkpoint(tmp_path / name / "checkpoint.npz") for name in ("straight", "paused")}
    for name, array in final["straight"].model_state.items():
        np.testing.assert_array_equal(final["paused"].model_state[name], array, err_msg=name)
    for position, state in final["straight"].optimizer_state["state"].items():
        for key, value in state.items():
            np.testing.assert_array_equal(final["paused"].optimizer_state["state"][position][key], value)
    assert final["paused"].rng_state == final["straight"].rng_state
    final["paused"].position.elapsed_seconds = final["straight"].position.elapsed_seconds
    assert final["paused"].position == final["straight"].position
    assert resumed.evaluation == straight.evaluation


@pytest.mark.filterwarnings("error::minibert.data.problems.DataWarning")
def test_short_sequences_come_first_and_a_resume_at_the_switch_is_exact(small_corpus, tmp_path):
    """With short_seq_length 16 and short_share 0.5 of 9 steps, steps 1-4 train on 16-token sequences (16
    per batch, the same tokens) and steps 5-9 on 32-token ones. A run paused right at the switch resumes
    onto the long sequences with the same losses as a run that never stopped. Building the short data cuts
    long sentences by design, which raises no DataWarning (the test turns one into an error)."""
    config = small_config(small_corpus, steps=9, dropout=0.1, short_seq_length=16, short_share=0.5)
    pretrain(config, tmp_path / "straight", data_dir=small_corpus.parent, **quiet())
    records = [record for record in read_log(tmp_path / "straight" / "log.jsonl") if record["kind"] == "train"]
    assert [record["seq_length"] for record in records] == [16] * 4 + [32] * 5
    pretrain(config, tmp_path / "paused", data_dir=small_corpus.parent, stop_after_steps=4, **quiet())
    pretrain(None, tmp_path / "paused", resume=True, data_dir=small_corpus.parent, **quiet())
    assert step_losses(tmp_path / "paused") == step_losses(tmp_path / "straight")
    assert config.short_phase().batch_size * 16 == config.batch_size * 32


def test_without_short_phase_nsp_the_sentence_head_waits_for_the_long_steps(small_corpus, tmp_path):
    """short_phase_nsp=False: the 3 short steps train the masked LM alone, so no gradient reaches the pooler
    or the NSP head and they keep their starting weights (while the encoder moves); the log has no NSP
    figures for them. The 3 long steps train NSP as usual. A run paused at the switch resumes exactly."""
    config = small_config(small_corpus, steps=6, short_seq_length=16, short_share=0.5, short_phase_nsp=False)
    pretrain(config, tmp_path / "paused", data_dir=small_corpus.parent, stop_after_steps=3, **quiet())
    at_switch = load_checkpoint(tmp_path / "paused" / "checkpoint.npz").model_state
    start = dict(pretraining_setup.build_model(config, BertTokenizer(tmp_path / "paused" / "vocab.txt").vocab_size)
                 .named_parameters())
    sentence_head = [name for name in at_switch if name.startswith(("bert.pooler.", "cls.seq_relationship."))]
    assert len(sentence_head) == 4
    for name in sentence_head:
        np.testing.assert_array_equal(at_switch[name], start[name].data, err_msg=name)
    assert not np.array_equal(at_switch["bert.encoder.layer.0.attention.self.query.weight"],
                              start["bert.encoder.layer.0.attention.self.query.weight"].data)
    pretrain(None, tmp_path / "paused", resume=True, data_dir=small_corpus.parent, **quiet())
    pretrain(config, tmp_path / "straight", data_dir=small_corpus.parent, **quiet())
    assert step_losses(tmp_path / "paused") == step_losses(tmp_path / "straight")
    records = [record for record in read_log(tmp_path / "straight" / "log.jsonl") if record["kind"] == "train"]
    assert [record["nsp_loss"] is None for record in records] == [True] * 3 + [False] * 3
    assert all(record["loss"] == record["mlm_loss"] for record in records[:3])
    assert all(record["loss"] > record["mlm_loss"] for record in records[3:])
    final = load_checkpoint(tmp_path / "straight" / "checkpoint.npz").model_state
    assert not any(np.array_equal(final[name], at_switch[name]) for name in sentence_head)


def test_resume_reads_a_setting_the_checkpoint_lacks_as_its_default():
    """A checkpoint saved before `short_phase_nsp` existed trained with its default (True): asking for that
    default resumes, asking for the other value is refused as a change of the run's numbers."""
    saved = PretrainingConfig(steps=10).to_dict()
    del saved["short_phase_nsp"]
    assert pretraining_setup.config_for_resume(saved, PretrainingConfig(steps=10).to_dict()).short_phase_nsp is True
    with pytest.raises(CheckpointError, match="short_phase_nsp"):
        pretraining_setup.config_for_resume(saved, {"short_phase_nsp": False})


def test_checkpoint_round_trip_restores_every_part_of_the_state(small_corpus, tmp_path):
    """Weights, Adam's moments and step counts, the schedule position and the generator state come back
    exactly into freshly built objects."""
    config = small_config(small_corpus, steps=4)
    trained = {}
    real_open_run = pretrain_module.open_run

    def keep_the_run(*args, **kwargs):  # the run object the loop trains, to compare with after
        trained["run"] = real_open_run(*args, **kwargs)
        return trained["run"]

    pretrain_module.open_run = keep_the_run
    try:
        pretrain(config, tmp_path / "run", data_dir=small_corpus.parent, **quiet())
    finally:
        pretrain_module.open_run = real_open_run
    run = trained["run"]
    checkpoint = load_checkpoint(tmp_path / "run" / "checkpoint.npz")
    model = pretraining_setup.build_model(config, run.tokenizer.vocab_size)
    optimizer = bert_optimizer(model.named_parameters(), **config.optimizer_settings())
    scheduler = pretraining_setup.build_scheduler(optimizer, config, 4)
    restore(checkpoint, model, optimizer, scheduler)
    for (name, ours), theirs in zip(model.named_parameters(), run.model.parameters(), strict=True):
        np.testing.assert_array_equal(ours.data, theirs.data, err_msg=name)
    for position, state in run.optimizer.state.items():
        assert optimizer.state[position]["step"] == state["step"] == 4
        for moment in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_array_equal(optimizer.state[position][moment], state[moment])
    assert scheduler.step_count == 4 and optimizer.param_groups[0]["lr"] == 0.0  # decayed to 0 at the end
    assert model.rng.random() == run.model.rng.random()
    assert checkpoint.position == PretrainingPosition(step=4, total_steps=4, epoch=0, batches_into_epoch=4,
                                                      elapsed_seconds=checkpoint.position.elapsed_seconds)


def test_resume_refuses_settings_that_change_the_numbers(small_corpus, tmp_path):
    """Resuming with another learning rate would not continue the run: refused before training, with the
    saved value named. Changing only the time limit or the logging is allowed."""
    config = small_config(small_corpus, steps=4)
    pretrain(config, tmp_path / "run", data_dir=small_corpus.parent, stop_after_steps=2, **quiet())
    with pytest.raises(CheckpointError, match=r"lr=0\.001, not 0\.005"):
        open_run(None, tmp_path / "run", resume=True, overrides={"lr": 5e-3}, data_dir=small_corpus.parent)
    result = pretrain(None, tmp_path / "run", resume=True, overrides={"minutes": 30.0, "eval_every": 1},
                      data_dir=small_corpus.parent, **quiet())
    assert result.step == 4


def test_resume_on_another_number_of_threads_continues_the_run(small_corpus, tmp_path):
    """`--resume --threads 1` was refused as a setting "that decides its numbers"; it is a speed setting, so
    the run goes on, saying that from here its numbers match only to float32 rounding: begun on 2 threads,
    paused and resumed on 1, it ends with the weights of one that ran on 2 throughout within float32's
    tolerance (batches of 32 sequences: the matmuls are cut in parts wherever Numba has two threads, and BLAS
    rounds a part's last bits by its size)."""
    config = small_config(small_corpus, steps=4, batch_size=32, threads=2)
    pretrain(config, tmp_path / "straight", data_dir=small_corpus.parent, **quiet())
    pretrain(config, tmp_path / "paused", data_dir=small_corpus.parent, stop_after_steps=2, **quiet())
    said = []
    resumed = pretrain(None, tmp_path / "paused", resume=True, overrides={"threads": 1},
                       data_dir=small_corpus.parent, **{**quiet(), "log": said.append})
    assert resumed.step == 4
    assert "threads: 1 now, 2 before; " in said[0] and "to float32 rounding, not bit for bit" in said[0], said
    final = {name: load_checkpoint(tmp_path / name / "checkpoint.npz") for name in ("straight", "paused")}
    for name, array in final["straight"].model_state.items():
        np.testing.assert_allclose(final["paused"].model_state[name], array, rtol=1e-4, atol=1e-6, err_msg=name)


def test_resume_and_new_run_guard_the_folder(small_corpus, tmp_path):
    """--resume with no checkpoint, and a new run over an existing one, are refused with the fix."""
    config = small_config(small_corpus, steps=2)
    with pytest.raises(CheckpointError, match="without --resume"):
        open_run(config, tmp_path / "run", resume=True, data_dir=small_corpus.parent)
    pretrain(config, tmp_path / "run", data_dir=small_corpus.parent, **quiet())
    with pytest.raises(CheckpointError, match="already holds a run"):
        open_run(config, tmp_path / "run", data_dir=small_corpus.parent)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "other file"])
def test_a_corrupt_checkpoint_is_refused_clearly(small_corpus, tmp_path, damage):
    """A truncated, overwritten or foreign checkpoint raises CheckpointError naming the file, before any
    training."""
    pretrain(small_config(small_corpus, steps=2), tmp_path / "run", data_dir=small_corpus.parent, **quiet())
    path = tmp_path / "run" / "checkpoint.npz"
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a checkpoint at all")
    else:
        BertForPreTraining(BertConfig.preset("tiny")).save(path)
    with pytest.raises(CheckpointError, match="checkpoint.npz"):
        open_run(None, tmp_path / "run", resume=True, data_dir=small_corpus.parent)


def test_a_checkpoint_from_a_different_model_is_refused(small_corpus, tmp_path):
    """A checkpoint whose model config differs from the one the run builds is refused, naming both."""
    config = small_config(small_corpus, steps=2)
    run = open_run(config, tmp_path / "run", data_dir=small_corpus.parent, log=lambda _: None)
    run.start_schedule(config.steps)
    run.lock.release()
    other = pretraining_setup.build_model(config.replace(model="mini", max_seq_length=32), run.tokenizer.vocab_size)
    save_checkpoint(tmp_path / "run" / "checkpoint.npz", other,
                    bert_optimizer(other.named_parameters(), **config.optimizer_settings()),
                    run.scheduler, config, run.position, run.data_fingerprint)
    assert load_checkpoint(tmp_path / "run" / "checkpoint.npz").model_config["hidden_size"] == 256
    with pytest.raises(CheckpointError, match="another config.*H=256.*H=64"):
        open_run(None, tmp_path / "run", resume=True, data_dir=small_corpus.parent)


def test_timed_evaluations_follow_the_clock_not_the_steps(small_corpus, tmp_path):
    """eval_every_minutes evaluates whenever the run's time passes a multiple of it (here: a tiny
    interval, so after every step), whatever eval_every says; and once more at the end only if needed."""
    config = small_config(small_corpus, steps=3, eval_every=1000, eval_every_minutes=1e-9)
    pretrain(config, tmp_path / "run", data_dir=small_corpus.parent, **quiet())
    records = read_log(tmp_path / "run" / "log.jsonl")
    evals = [record["step"] for record in records if record["kind"] == "eval"]
    assert evals == [1, 2, 3]


def test_each_session_evaluates_and_saves_its_last_step_once_and_its_first_not_again(small_corpus, tmp_path):
    """Evaluations and checkpoints come every so many steps and at the step a session stops, however it
    stops; a resumed session does not evaluate or save again the step it starts from, and resuming a finished
    run takes no step, saves nothing and evaluates once."""
    config = small_config(small_corpus, steps=6, eval_every=2, checkpoint_every=2)
    folder = tmp_path / "run"
    pretrain(config, folder, data_dir=small_corpus.parent, stop_after_steps=3, **quiet())  # a pause at 3
    pretrain(None, folder, resume=True, data_dir=small_corpus.parent, **quiet())
    finished = (folder / "checkpoint.npz").stat()  # a save writes a new file over it (atomic_write)
    again = pretrain(None, folder, resume=True, data_dir=small_corpus.parent, **quiet())
    records = read_log(folder / "log.jsonl")
    assert [record["step"] for record in records if record["kind"] == "eval"] == [2, 3, 4, 6, 6]
    assert [record["step"] for record in records if record["kind"] == "train"] == [1, 2, 3, 4, 5, 6]
    assert again.step == 6 and again.evaluation is not None
    now = (folder / "checkpoint.npz").stat()
    assert (now.st_ino, now.st_mtime_ns) == (finished.st_ino, finished.st_mtime_ns)


# ----- bad settings are refused before training -----

@pytest.mark.parametrize("changes, words", [
    ({"max_seq_length": 256}, "max_position_embeddings=128"),
    ({"max_predictions_per_seq": 40}, "does not fit in max_seq_length=32"),
    ({"batch_size": 0}, "batch_size=0"),
    ({"steps": None}, "needs an end"),
    ({"lr": float("nan")}, "lr=nan"),
    ({"warmup": 1.5}, "warmup=1.5"),
    ({"optimizer": "sgd"}, "optimizer='sgd'"),
    ({"short_seq_length": 12}, "must divide max_seq_length=32"),
    ({"short_seq_length": 16, "short_share": 1.0}, "short_share=1.0"),
    ({"masked_lm_prob": 0.0}, "masked_lm_prob=0.0"),
    ({"adam_beta2": 1.0}, "adam_beta2=1.0"),
    ({"schedule": "stable-decay", "decay": 0.95}, "decay=0.95"),
    ({"position_init": "zeros"}, "position_init='zeros'"),
    ({"attention_init": "identity"}, "attention_init='identity'"),
])
def test_settings_that_cannot_work_are_refused(small_corpus, changes, words):
    """Each impossible setting raises ConfigError naming the value."""
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        small_config(small_corpus, **{"steps": 2, **changes})


def test_a_batch_larger_than_the_training_split_is_refused(small_corpus, tmp_path):
    """A batch size no epoch can fill would loop forever: refused with the split's size."""
    with pytest.raises(DataError, match="fewer than batch_size=100000"):
        open_run(small_config(small_corpus, steps=2, batch_size=100000), tmp_path / "run",
                 data_dir=small_corpus.parent)


def test_unknown_presets_and_fields_are_refused():
    """Presets and settings are checked by name."""
    with pytest.raises(ConfigError, match="unknown run preset 'huge'"):
        run_preset("huge")
    with pytest.raises(ConfigError, match="unknown run settings"):
        PretrainingConfig.from_dict({"learning_rate": 1e-3})
    assert run_preset("mini").max_seq_length == 128 and run_preset("mini").batch_size == 32
    assert run_preset("mini").max_predictions_per_seq == 40 and run_preset("mini").masked_lm_prob == 0.3


# ----- Ctrl-C -----

def test_ctrl_c_becomes_a_stop_request():
    """The first SIGINT sets the request (and tells the user); a second would raise KeyboardInterrupt;
    leaving the block puts the previous handler back."""
    messages = []
    before = signal.getsignal(signal.SIGINT)
    with StopRequest(messages.append) as stop:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.requested and "Ctrl-C" in messages[0]
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before


# ----- metrics and evaluation -----

def test_accuracy_counts_only_real_masked_positions():
    """Padding slots (weight 0) are neither right nor wrong; NSP counts every sequence."""
    logits = np.zeros((2, 3, 4))
    logits[0, 0, 1] = logits[0, 1, 2] = logits[0, 2, 3] = logits[1, 0, 0] = 1.0  # guesses 1 2 3 / 0 0 0
    ids = np.array([[1, 0, 3], [0, 2, 0]])
    weights = np.array([[1, 1, 0], [1, 0, 0]], dtype=np.float32)
    assert masked_lm_correct(logits, ids, weights) == (2, 3)
    assert next_sentence_correct(np.array([[2.0, 1.0], [0.0, 1.0], [3.0, 0.0]]), [0, 0, 1]) == (1, 3)


def test_evaluation_is_repeatable_and_leaves_the_model_as_it_was(small_corpus):
    """Two evaluations of one model give the same figures (same batches, same masks, no dropout); the
    model goes back to training mode and its random state is untouched."""
    config = small_config(small_corpus, steps=2, dropout=0.1)
    shard_dir, vocab_path, _ = pretraining_setup.prepare_data(config, small_corpus.parent, log=lambda _: None)
    _, eval_batches = pretraining_setup.open_batches(shard_dir, config)
    model = pretraining_setup.build_model(config, BertTokenizer(vocab_path).vocab_size)
    state = model.rng.bit_generator.state
    first, second = evaluate(model, eval_batches, 2), evaluate(model, eval_batches, 2)
    assert first == second and first.sequences == 16 and 0 < first.predictions <= 16 * 5
    assert model.training and model.rng.bit_generator.state == state
    assert math.isclose(first.mlm_loss, math.log(model.config.vocab_size), rel_tol=0.1)  # untrained: uniform


# ----- logs and progress -----

def test_log_survives_a_half_written_line_and_drops_steps_after_a_checkpoint(tmp_path):
    """read_log skips a line cut short by a kill; drop_after forgets steps a resumed run will redo."""
    log = TrainingLog(tmp_path / "log.jsonl")
    for step in (1, 2, 3):
        log.write("train", step=step, loss=float(step), mlm_accuracy=float("nan"))
    with open(log.path, "a") as file:
        file.write('{"kind": "train", "st')
    records = read_log(log.path)
    assert [record["step"] for record in records] == [1, 2, 3] and records[0]["mlm_accuracy"] is None
    log.drop_after(2)
    assert [record["step"] for record in read_log(log.path)] == [1, 2]


def test_curves_are_valid_svg_with_one_line_per_series(tmp_path):
    """loss.svg and accuracy.svg parse as XML and hold the series that have points."""
    records = [{"kind": "train", "step": s, "loss": 7.0 - s, "mlm_loss": 6.0 - s, "mlm_accuracy": s / 10,
                "nsp_accuracy": 0.5} for s in (1, 2, 3)]
    records.append({"kind": "eval", "step": 3, "mlm_loss": 4.0, "nsp_loss": 0.6, "mlm_accuracy": 0.2,
                    "nsp_accuracy": 0.6})
    paths = draw_curves(records, tmp_path)
    assert sorted(path.name for path in paths) == ["accuracy.svg", "loss.svg"]
    for path in paths:
        series = [element for element in ElementTree.parse(path).iter()
                  if element.get("class") == "series"]
        assert len(series) == 4


def test_progress_is_one_live_line_on_a_terminal_and_plain_lines_elsewhere():
    """A terminal gets carriage returns and no newline until close(); a file gets whole lines, at most
    one per interval (plus forced ones)."""
    terminal = io.StringIO()
    line = ProgressLine(terminal, live=True)
    line.update("step 1/10")
    line.update("step 2/10")
    assert terminal.getvalue() == "\rstep 1/10\rstep 2/10" and "\n" not in terminal.getvalue()
    line.message("evaluated")
    assert terminal.getvalue().endswith("evaluated\nstep 2/10")
    line.close()
    assert terminal.getvalue().endswith("\n")
    pipe = io.StringIO()
    plain = ProgressLine(pipe, live=False, every=3600)
    plain.update("first")
    plain.update("second")
    plain.update("third", force=True)
    assert pipe.getvalue() == "first\nthird\n"


def test_progress_text_shows_every_figure():
    """step/total, loss, MLM and NSP accuracy, learning rate, tokens/s and ETA all appear."""
    text = progress_text(420, 3000, 5.8123, 0.142, 0.61, 9.1e-4, 6010.4, 425)
    assert text == ("step 420/3000  loss 5.812  MLM 14.2%  NSP 61.0%  lr 9.1e-04  6,010 tok/s  ETA 7:05")
    assert format_duration(3723) == "1:02:03" and format_duration(float("nan")) == "?"


# ----- looking inside: fill-mask, attention, loading -----

@pytest.fixture(scope="module")
def trained_run(small_corpus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("run") / "run"
    pretrain(small_config(small_corpus, steps=3), folder, data_dir=small_corpus.parent, **quiet())
    return folder


def test_fine_tuning_windows_shrink_to_the_pretrained_length(trained_run):
    """A run folder pretrained at 32 tokens: QA's default 384-token windows become 32-token ones with a
    stride of 16 (positions past 32 were never trained), a length the user gave stays, and a
    from_pretrained folder, which does not record its length, changes nothing."""
    assert pretrained_length(trained_run) == 32
    tokenizer = BertTokenizer(trained_run / "vocab.txt")
    task = make_task("qa", tokenizer)
    fit_pretrained_length(task, trained_run, {}, log=None)
    assert (task.max_seq_length, task.doc_stride) == (32, 16)
    chosen = make_task("qa", tokenizer, max_seq_length=64)
    fit_pretrained_length(chosen, trained_run, {"max_seq_length": 64}, log=None)
    assert chosen.max_seq_length == 64
    assert pretrained_length(trained_run / "no-such-checkpoint") is None


def test_run_settings_are_read_without_the_weights(trained_run, tmp_path):
    """load_run_config reads the metadata alone and gives what load_checkpoint gives; a weights file that is
    not a training checkpoint is refused the same way."""
    path = trained_run / "checkpoint.npz"
    assert load_run_config(path) == load_checkpoint(path).run_config
    assert load_run_config(path)["max_seq_length"] == 32
    BertForPreTraining(BertConfig.preset("tiny")).save(tmp_path / "weights.npz")
    with pytest.raises(CheckpointError, match="not a minibert training checkpoint"):
        load_run_config(tmp_path / "weights.npz")


def test_fill_mask_gives_sorted_probabilities_per_mask_in_english_and_chinese(trained_run):
    """One list per [MASK]; probabilities are in (0, 1], sorted, and match a softmax over the vocabulary
    (so the top k sum to at most 1). Chinese text without spaces works: each character is a token."""
    model, tokenizer = load_for_inference(trained_run)
    for text, masks in (("anna [MASK] a little [MASK] .", 2), ("小明给小红[MASK]一本书。", 1)):
        predictions = fill_mask(model, tokenizer, text, top_k=4)
        assert len(predictions) == masks
        for candidates in predictions:
            probabilities = [probability for _, probability in candidates]
            assert len(candidates) == 4 and probabilities == sorted(probabilities, reverse=True)
            assert 0 < sum(probabilities) <= 1 + 1e-9
    with pytest.raises(TokenizerError, match=r"no \[MASK\]"):
        fill_mask(model, tokenizer, "nothing to guess")
    with pytest.raises(ShapeError, match="max_position_embeddings=128"):
        fill_mask(model, tokenizer, "word " * 200 + "[MASK]")


def test_masked_examples_show_held_out_text_with_answers(trained_run, small_corpus):
    """The end-of-run demo shows decoded text with [MASK]s, a guess line per mask, and the true token."""
    model, tokenizer = load_for_inference(trained_run)
    config = small_config(small_corpus, steps=1)
    shard_dir, _, _ = pretraining_setup.prepare_data(config, small_corpus.parent, log=lambda _: None)
    _, eval_batches = pretraining_setup.open_batches(shard_dir, config)
    lines = masked_examples(model, tokenizer, next(eval_batches.epoch(0)), count=2)
    texts = [line for line in lines if not line.startswith("    [MASK]")]
    guesses = [line for line in lines if line.startswith("    [MASK]")]
    assert len(texts) == 2 and all("[MASK]" in text for text in texts)
    assert sum(text.count("[MASK]") for text in texts) == len(guesses)
    assert all("(answer: " in guess for guess in guesses)


def test_run_folder_and_from_pretrained_folder_load_the_same_model(trained_run, tmp_path):
    """`--model` accepts a run folder and a save_pretrained folder; both give the same guesses. A missing
    folder, or one that holds neither, is refused with what to give instead."""
    model, tokenizer = load_for_inference(trained_run)
    model.vocab_file = str(trained_run / "vocab.txt")
    model.save_pretrained(tmp_path / "hf")
    again, tokenizer_again = load_for_inference(tmp_path / "hf")
    text = "anna [MASK] a little tired ."
    assert fill_mask(model, tokenizer, text) == fill_mask(again, tokenizer_again, text)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_for_inference(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="neither"):
        load_for_inference(tmp_path / "empty")


def test_a_run_folder_gives_the_sentence_vectors_of_its_saved_encoder(trained_run, tmp_path):
    """`embed` and the ladder's probe read a pretraining run folder as they read a from_pretrained one: the
    encoder of its checkpoint, mean-pooled, texts cut where the run's sequences ended (positions past them
    were never trained)."""
    model, _ = load_for_inference(trained_run)
    model.vocab_file = str(trained_run / "vocab.txt")
    model.save_pretrained(tmp_path / "hf")
    texts = ["anna is a little tired .", "tom reads ."]
    encoder = SentenceEncoder.from_pretrained(trained_run)
    assert encoder.max_length == load_run_config(trained_run / "checkpoint.npz")["max_seq_length"]
    assert encoder.max_length < model.config.max_position_embeddings
    from_run = encoder.encode(texts)
    assert from_run.shape == (2, model.config.hidden_size)
    np.testing.assert_array_equal(from_run, SentenceEncoder.from_pretrained(tmp_path / "hf").encode(texts))


def test_a_weights_only_checkpoint_reads_as_its_run_and_refuses_to_resume(trained_run, tmp_path):
    """keep_weights_only leaves out Adam's two averages (two thirds of the bytes), and nothing a reader of
    the model uses: the folder it makes gives the run's weights bit for bit, the same sentence vectors and
    the same fine-tuning length. --resume on it is refused, naming the file and what it can still do."""
    kept = tmp_path / "kept"
    kept.mkdir()
    keep_weights_only(trained_run / "checkpoint.npz", kept / "checkpoint.npz")
    (kept / "vocab.txt").write_bytes((trained_run / "vocab.txt").read_bytes())
    assert (kept / "checkpoint.npz").stat().st_size < 0.4 * (trained_run / "checkpoint.npz").stat().st_size
    whole, weights = (load_checkpoint(folder / "checkpoint.npz") for folder in (trained_run, kept))
    assert weights.weights_only and not whole.weights_only
    assert weights.model_state.keys() == whole.model_state.keys()
    for name, array in whole.model_state.items():
        np.testing.assert_array_equal(weights.model_state[name], array, err_msg=name)
    texts = ["anna is a little tired .", "tom reads ."]
    np.testing.assert_array_equal(SentenceEncoder.from_pretrained(kept).encode(texts),
                                  SentenceEncoder.from_pretrained(trained_run).encode(texts))
    assert pretrained_length(kept) == pretrained_length(trained_run)
    with pytest.raises(CheckpointError, match=r"checkpoint.npz holds the weights only .* cannot continue"):
        open_run(None, kept, resume=True)


def test_attention_rows_are_distributions_and_causal_ones_stop_at_the_diagonal(trained_run):
    """Every row of every head sums to 1; with a causal mask nothing above the diagonal is attended to.
    The terminal view names each head; the SVG page parses and holds one cell per matrix entry."""
    model, tokenizer = load_for_inference(trained_run)
    tokens, attentions = attention_maps(model, tokenizer, "anna felt tired .")
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert len(attentions) == model.config.num_hidden_layers
    for layer in attentions:
        assert layer.shape == (model.config.num_attention_heads, len(tokens), len(tokens))
        np.testing.assert_allclose(layer.sum(axis=-1), 1.0, rtol=1e-5)
    text = attention_text(tokens, attentions, layers=[1], heads=[0])
    assert text.startswith("layer 1, head 0") and "anna" in text and "layer 0" not in text
    svg = ElementTree.fromstring(attention_svg(tokens, attentions))
    cells = [element for element in svg.iter() if element.get("class") == "cell"]
    assert len(cells) == len(attentions) * attentions[0].shape[0] * len(tokens) ** 2
    with pytest.raises(ShapeError, match="layer 9 does not exist"):
        attention_text(tokens, attentions, layers=[9])
    causal = BertForPreTraining(BertConfig.from_dict({**model.config.to_dict(), "attention": "causal"}))
    causal.load_state_dict(model.state_dict())
    _, causal_attentions = attention_maps(causal, tokenizer, "anna felt tired .")
    above = np.triu(np.ones((len(tokens), len(tokens)), dtype=bool), k=1)
    assert np.all(causal_attentions[0][:, above] == 0)


def test_tiled_svg_places_each_picture_once():
    """tile_svgs nests each picture as an <svg> with its own x and y, and the page is big enough."""
    picture = ('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50">'
               "<rect/></svg>\n")
    page = ElementTree.fromstring(tile_svgs([[picture, picture], [picture]]))
    nested = [(element.get("x"), element.get("y")) for element in page
              if element.tag.endswith("svg")]
    assert nested == [("0", "0"), ("116", "0"), ("0", "66")]
    assert (page.get("width"), page.get("height")) == ("216", "116")


def test_run_log_records_start_train_eval_end(trained_run):
    """A run's log has a start record with the config, train records for each step, evaluations, an end."""
    records = read_log(trained_run / "log.jsonl")
    kinds = [record["kind"] for record in records]
    assert kinds[0] == "start" and kinds[-1] == "end" and "eval" in kinds
    assert records[0]["config"]["model"] == "tiny"
    # the corpus as its versions.json says it was built: without it, a checkpoint cannot be made again
    corpus = Path(records[0]["config"]["corpus"])
    assert records[0]["corpus"]["sha256"] == hashlib.sha256(corpus.read_bytes()).hexdigest()
    assert [record["step"] for record in records if record["kind"] == "train"] == [1, 2, 3]
    assert json.loads((trained_run / "log.jsonl").read_text().splitlines()[-1])["stopped"] == "finished"


def test_a_batch_stream_over_epochs_without_batches_stops():
    """batch_stream loops over epochs until its caller stops; an epoch of no batch made it spin forever
    without yielding. It is refused instead; a stream that skips a whole epoch moves on to the next."""
    from minibert.errors import DataError

    class Batches:
        def __init__(self, sizes):
            self.sizes = sizes

        def epoch(self, epoch):
            return [f"e{epoch}b{index}" for index in range(self.sizes[epoch % len(self.sizes)])]

    with pytest.raises(DataError, match="epoch 0 of the training data holds no batch"):
        next(batch_stream(Batches([0]), 0, 0))
    stream = batch_stream(Batches([2]), 0, 2)  # epoch 0 used up: the stream starts at epoch 1
    assert [next(stream) for _ in range(3)] == [(1, 0, "e1b0"), (1, 1, "e1b1"), (2, 0, "e2b0")]



# ----- planning a run from the clock -----

def seconds_of(total, done, short, long, config):
    """What `plan_steps` budgets for steps done..total: short steps up to short_share * total, the rest long,
    each with its share of the evaluations; added up step by step."""
    evaluation = (config.eval_batches or 20) * long / 3 / config.eval_every
    switch = round(config.short_share * total) if short is not None else 0
    return sum((short if step < switch else long) + evaluation for step in range(done, total))


@settings(derandomize=True, max_examples=60, deadline=None)
@given(short=st.one_of(st.none(), st.floats(0.05, 1.0)), long=st.floats(0.1, 2.0), share=st.floats(0, 0.9),
       left=st.floats(60, 1200), done_share=st.floats(0, 0.5))
def test_planned_steps_fill_the_time_left_without_passing_it(short, long, share, left, done_share):
    """The plan's steps take at most the time left (less the margin, give or take one step's rounding at the
    switch), and no less than 90% of it."""
    config = run_preset("mini", short_share=share, eval_every=200, eval_batches=20)
    done = int(done_share * left / long)
    total = step_plan.plan_steps(short, long, config, left, done, margin=0.97)
    if total > done + 1:
        spent = seconds_of(total, done, short, long, config)
        one_step = max(short or 0.0, long)  # the switch rounds to a whole step, short or long: the slower one
        assert spent <= 0.97 * left + one_step
        assert spent >= 0.9 * 0.97 * left - one_step


class Seen(Exception):
    """Raised by a test's hook once it has seen what it waited for."""


def test_a_run_planned_from_the_clock_plans_again_and_keeps_its_past_rates(small_corpus, tmp_path, monkeypatch):
    """A quarter of the way in, a minutes-planned stable-decay run plans its total again from its own steps
    (logged as a "plan" record) and the loop takes the plan: the total, the schedule over it, where the short
    sequences end. The rate goes on at the peak, with no second warmup, under the new total (which a resumed
    run reads from the checkpoint's position)."""
    config = small_config(small_corpus, minutes=0.5, schedule="stable-decay", eval_every=1000, log_every=50,
                          checkpoint_every=1000)
    seen = {}
    real_show = pretrain_module.show_progress

    def watch(progress, run, clock, recent):  # called after each step: stop one step after the new plan
        real_show(progress, run, clock, recent)
        if run.position.step == clock.replan_from + 1:
            seen.update(run=run, replan_from=clock.replan_from)
            raise Seen

    monkeypatch.setattr(pretrain_module, "show_progress", watch)
    with pytest.raises(Seen):
        pretrain(config, tmp_path / "run", data_dir=small_corpus.parent, **quiet())
    run, replan_from = seen["run"], seen["replan_from"]
    first_plan = read_log(tmp_path / "run" / "log.jsonl")[0]["total_steps"]  # the "start" record
    assert replan_from == max(round(0.25 * first_plan), 20)
    plans = [record for record in read_log(tmp_path / "run" / "log.jsonl") if record["kind"] == "plan"]
    assert [(p["step"], p["planned"], p["total_steps"]) for p in plans] == [
        (replan_from, first_plan, run.position.total_steps)]
    old_rate = pretraining_setup.schedule_for(config, first_plan)
    new_rate = pretraining_setup.schedule_for(config, run.position.total_steps)
    assert old_rate(replan_from) == new_rate(replan_from) == new_rate(replan_from + 1) == 1.0
    assert run.optimizer.param_groups[0]["lr"] == config.lr  # the rate of the next step: still the peak
    steps = range(run.position.total_steps + 2)
    assert [run.scheduler.schedule(step) for step in steps] == [new_rate(step) for step in steps]
    assert plans[0]["short_steps"] == (round(config.short_share * run.position.total_steps)
                                       if run.short_batches else 0)


def test_a_mini_run_too_short_to_learn_says_how_many_minutes_would_do(small_corpus, tmp_path, monkeypatch):
    """On a machine where the minutes fit fewer steps than the mini recipe needs, the run says so when it
    starts, and the minutes it names fit them (planned the same way); a fast machine, or another model, hears
    nothing of it."""
    def planned(model, minutes, pass_seconds, folder):
        monkeypatch.setattr(step_plan, "measure_pass_seconds", lambda *args: pass_seconds)
        lines = []
        config = small_config(small_corpus, model=model, minutes=minutes, schedule="stable-decay",
                              eval_every=200)
        run = open_run(config, tmp_path / folder, data_dir=small_corpus.parent, log=lambda _: None)
        run.lock.release()
        # as if setting up had taken 4 minutes (a cold start on a slow machine takes one): the minutes named
        # must count them too
        steps = PretrainingClock(run, started=time.perf_counter() - 240).first_plan(lines.append)
        return steps, [line for line in lines if "--minutes" in line]

    steps, advice = planned("mini", 15, 2.0, "slow")
    assert steps < MINI_STEPS_TO_LEARN and len(advice) == 1
    minutes = int(re.search(r"--minutes (\d+)", advice[0]).group(1))
    assert planned("mini", minutes, 2.0, "enough")[0] >= 0.99 * MINI_STEPS_TO_LEARN
    assert planned("mini", minutes - 1, 2.0, "a-minute-less")[0] < 1.01 * MINI_STEPS_TO_LEARN
    fast_steps, fast_advice = planned("mini", 15, 0.5, "fast")
    assert fast_steps >= MINI_STEPS_TO_LEARN and fast_advice == []
    assert planned("tiny", 15, 2.0, "tiny")[1] == []


def test_recent_steps_count_wall_time_less_evaluations_in_long_steps():
    """A step's time is how far the clock moved since the step before, less the evaluations; a short step
    counts as short_to_long times its time; the mean is over the last `size` steps, and none below
    MIN_STEPS."""
    recent = step_plan.RecentSteps(short_to_long=1.5, size=30)
    recent.start(elapsed_seconds=100.0, evaluation_seconds=4.0)
    elapsed, evaluations = 100.0, 4.0
    for step in range(1, 41):
        elapsed += 1.0 if step <= 20 else 3.0  # 20 short steps of 1 s, then long ones of 3 s
        if step == 30:  # an evaluation of 7 s came after the step before
            elapsed, evaluations = elapsed + 7.0, evaluations + 7.0
        recent.add(elapsed, evaluations, short=step <= 20)
        if step == step_plan.RecentSteps.MIN_STEPS - 1:
            assert recent.long_step_seconds() is None
        if step == 20:
            assert recent.long_step_seconds() == pytest.approx(1.5)
    assert recent.long_step_seconds() == pytest.approx((10 * 1.5 + 20 * 3.0) / 30)


def test_plans_go_on_until_the_cool_down_and_fill_the_time_left(small_corpus, tmp_path):
    """After the first, a plan comes every REPLAN_EVERY steps while the next step's rate is the peak, once the
    window holds enough steps to time. The steps it plans fill the time left; once the long sequences have
    begun, it leaves their start where it is, and before, it moves the start with the total. The clock only
    proposes: the run's position and schedule stay as they were until the loop takes the plan."""
    config = small_config(small_corpus, minutes=0.5, schedule="stable-decay", decay=0.2, warmup=0.1,
                          short_seq_length=16, short_share=0.5, eval_every=100)
    run = open_run(config, tmp_path / "run", data_dir=small_corpus.parent, log=lambda _: None)
    run.lock.release()
    run.position.total_steps = 1000
    run.start_schedule(1000)
    clock, position, schedule = PretrainingClock(run, time.perf_counter()), run.position, run.scheduler.schedule
    clock.replan_from = 250
    clock.recent_steps = step_plan.RecentSteps(short_to_long=2.0, size=REPLAN_WINDOW)
    position.step = 250
    assert not clock.replan_due()  # no step timed yet
    clock.recent_steps.seconds.extend([1.0] * REPLAN_WINDOW)  # long steps of 1.0 s each
    due = []
    for step in range(1000):
        position.step = step
        if clock.replan_due():
            due.append(step)
    assert due == list(range(250, 799, REPLAN_EVERY))  # the cool-down starts at step 800

    # evaluations of 10 s, 200 s left
    clock.pass_seconds = clock.short_pass_seconds = 1.0
    position.step, position.elapsed_seconds = 600, 180.0
    clock.evaluation_seconds, clock.time_limit = 10.0, 380.0
    before = dataclasses.replace(position)
    plan = clock.replan(short_steps=500)
    assert position == before and run.scheduler.schedule is schedule
    per_step = 1.0 + 10.0 / config.eval_every
    assert 0.9 * 0.95 * 200 <= (plan.total_steps - 600) * per_step <= 0.95 * 200
    assert plan.short_steps == 500

    position.step, clock.time_limit = 300, 1000.0
    plan = clock.replan(short_steps=500)
    assert plan.short_steps == round(0.5 * plan.total_steps) > 300
