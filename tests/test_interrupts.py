"""Ctrl-C anywhere in the long commands: a real process gets SIGINT at several moments (starting up, compiling
the kernels, training, between runs), stops with a line that says what was kept, no traceback, exit 130, and
the same command goes on or starts again from what it left. pretrain's own Ctrl-C tests are in
test_train_bad_input.py."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from minibert.cli import main
from minibert.model import BertConfig, BertModel
from minibert.tokenizer.trainer import train_wordpiece
from minibert.train.interrupt import (
    StopRequest,
    interrupted_inside_native_code,
    resend_dropped_interrupt,
    stop_if_requested,
)
from tests.helpers import ROOT

SYNTHETIC = ROOT / "data" / "synthetic"


def interrupted_at(marker, *arguments, delay=0.5):
    """Run `python -m minibert ARGUMENTS`, send SIGINT `delay` seconds after the output first shows `marker`
    (None: as soon as the process has started), and return (exit status, everything it printed)."""
    process = subprocess.Popen([sys.executable, "-u", "-m", "minibert", *map(str, arguments)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    printed = []
    if marker is not None:
        for line in process.stdout:
            printed.append(line)
            if marker in line:
                break
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=300)
    return process.returncode, "".join(printed) + rest


def finished_cleanly(status, output):
    assert "Traceback" not in output and "Exception ignored" not in output, output
    assert status == 130 and output.rstrip().endswith("interrupted"), output


def saved_runs(out):
    records = [json.loads(path.read_text()) for path in sorted((out / "runs").glob("*.json"))]
    assert all(isinstance(value, float) for record in records for value in record["metrics"].values())
    return len(records)


def test_an_experiment_stopped_at_several_moments_goes_on_where_it_stopped(tmp_path):
    """Ctrl-C while the experiment starts (data, kernels), during its first run and during its third: each
    time it says how many runs are saved and exits 130; every saved record is whole, and the fourth start
    finishes the experiment, skipping the runs already saved."""
    out, command = tmp_path / "E", ("experiment", "mask-rate", "--seeds", "1", "--out", tmp_path / "E")
    counts = []
    for marker in ("saved in", "run 1/4:", "run 3/4:"):
        status, output = interrupted_at(marker, *command)
        finished_cleanly(status, output)
        assert "runs are saved in" in output, output
        counts.append(saved_runs(out) if (out / "runs").is_dir() else 0)
        assert f"stopped: {counts[-1]} of 4 runs are saved" in output, output
    assert counts == sorted(counts) and counts[-1] >= 2, counts  # the third stop came during run 3
    result = subprocess.run([sys.executable, "-m", "minibert", *map(str, command)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and f"{counts[-1]} of 4 runs already" in result.stderr, result.stderr
    assert saved_runs(out) == 4 and len(json.loads((out / "results.json").read_text())["runs"]) == 4


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    """A random `tiny` BertModel with a vocabulary of the synthetic sentiment set."""
    folder = tmp_path_factory.mktemp("model")
    tokens = train_wordpiece([SYNTHETIC / "sentiment_train.tsv"], 600, out=folder / "vocab.txt")
    BertModel(BertConfig.preset("tiny", vocab_size=len(tokens), num_hidden_layers=1)).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("marker, kept", [(None, None), ("speed layer on", None),
                                          ("fine-tuning:", "no epoch had ended"),
                                          ("epoch 1:", "the best epoch so far")])
def test_finetune_stopped_at_several_moments_keeps_its_best_epoch(model_folder, tmp_path, marker, kept):
    """Ctrl-C while Python loads the package, while finetune reads its model and data, in its first epoch,
    and after an epoch: exit 130 without a traceback; once an epoch has ended, its model stays saved and
    loads (predict reads it), finetune.json says where the run was stopped and its report that it was; the
    same command with --overwrite then trains again from the start."""
    out = tmp_path / "F"
    command = ("finetune", "--task", "sentiment", "--model", model_folder, "--out", out, "--epochs", "40",
               "--threads", "1")
    status, output = interrupted_at(marker, *command)
    finished_cleanly(status, output)
    if kept is not None:
        assert kept in output and "run the same command with --overwrite" in output, output
    if kept == "the best epoch so far":
        assert json.loads((out / "finetune.json").read_text())["stopped"].startswith("Ctrl-C after step")
        assert json.loads((out / "report.json").read_text())["run"]["status"] == "interrupted"  # was "running"
        predicted = subprocess.run([sys.executable, "-m", "minibert", "predict", "--model", out, "good"],
                                   cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert predicted.returncode == 0, predicted.stderr
    again = subprocess.run([sys.executable, "-m", "minibert", *map(str, command[:-4]), "--epochs", "1",
                            "--threads", "1", "--overwrite"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0 and "best dev epoch 1" in again.stdout, again.stderr


@pytest.fixture
def python_s_ctrl_c():
    """Python's own SIGINT handler for the test, whatever this process inherited: a test runner started as a
    background job of a shell inherits SIGINT ignored, and Python then leaves it ignored."""
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, inherited)


def test_a_nested_block_shares_the_outer_request(python_s_ctrl_c):
    """An inner loop's StopRequest (a fine-tuning inside an experiment) reads the outer one's Ctrl-C, and
    stop_if_requested raises only once Ctrl-C was pressed."""
    messages = []
    with StopRequest(messages.append, "outer") as outer:
        with StopRequest(messages.append, "inner") as inner:
            assert inner is outer
            stop_if_requested()  # nothing pressed yet: no effect
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs in the main thread at the next bytecode
            assert outer.requested and messages == ["outer"]
            with pytest.raises(KeyboardInterrupt):
                stop_if_requested()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    stop_if_requested()  # outside every block: nothing to stop


def test_ctrl_c_inside_a_kernel_is_reported_as_an_interruption(monkeypatch, capsys):
    """A second Ctrl-C landing inside a Numba call comes out as SystemError caused by KeyboardInterrupt: the
    command line says `interrupted` and exits 130 instead of printing the traceback; any other SystemError
    still propagates."""
    import minibert.cli.vocab as vocab

    def kernel_interrupted(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise SystemError("CPUDispatcher(<function matmul>) returned a result with an exception set") \
                from interrupt

    monkeypatch.setattr(vocab, "run", kernel_interrupted)
    with pytest.raises(SystemExit) as exit_status:
        main(["vocab", "--corpus", "corpus.txt", "--out", "v.txt"])
    assert exit_status.value.code == 130 and capsys.readouterr().err.strip() == "interrupted"
    assert not interrupted_inside_native_code(SystemError("a real bug"))
    monkeypatch.setattr(vocab, "run", lambda args: (_ for _ in ()).throw(SystemError("a real bug")))
    with pytest.raises(SystemError, match="a real bug"):
        main(["vocab", "--corpus", "corpus.txt", "--out", "v.txt"])


def test_a_ctrl_c_dropped_inside_a_callback_is_sent_again(python_s_ctrl_c):
    """Python drops a KeyboardInterrupt raised inside a ctypes callback (Numba's compiler) after printing it;
    the command line's hook sends SIGINT again, so the interruption still happens; other unraisable errors
    are printed as Python prints them."""
    class Unraisable:
        exc_type, exc_traceback, err_msg, object = KeyboardInterrupt, None, None, None
        exc_value = KeyboardInterrupt()

    with pytest.raises(KeyboardInterrupt):
        resend_dropped_interrupt(Unraisable())
        time.sleep(0.05)  # the signal's handler runs at the next bytecode
