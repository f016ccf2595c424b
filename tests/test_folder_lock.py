"""Run folders are locked while a run writes them (minibert/io/folder_lock.py), and a run never replaces files
it did not write: two `pretrain --out D` started together used to mix their steps in one log.jsonl, and
`pretrain --out D` replaced a log.jsonl or vocab.txt of the user's without a word."""

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from helpers import finished, minibert, quiet, small_config, small_options

from minibert.data.build import build_pretraining_data
from minibert.data.shards import read_manifest
from minibert.io.folder_lock import LOCK_FILE, TAKEOVER_FILE, FolderLock
from minibert.io.overwrite import WouldOverwrite
from minibert.train.logs import read_log
from minibert.train.pretraining_loop import pretrain


def dead_pid():
    """The pid of a process that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_the_lock_holds_the_pid_and_refuses_another_process(tmp_path):
    """The lock file holds the owner's pid; while it is held, another process is refused with that pid
    named; a second lock in the same process shares it, and the file goes with the last release."""
    folder = tmp_path / "run"
    try_lock = ("import sys; from minibert.io.folder_lock import FolderLock, FolderInUse\n"
                "try:\n    FolderLock(sys.argv[1]).acquire()\nexcept FolderInUse as error:\n    print(error)")
    with FolderLock(folder) as lock:
        assert (folder / LOCK_FILE).read_text().strip() == str(os.getpid())
        refused = subprocess.run([sys.executable, "-c", try_lock, str(folder)], capture_output=True, text=True,
                                 check=True, cwd=Path(__file__).resolve().parents[1])
        assert f"run is in use by pid {os.getpid()}" in refused.stdout, refused
        with FolderLock(folder):
            assert lock.held
        assert (folder / LOCK_FILE).is_file()
    assert not (folder / LOCK_FILE).exists()
    with FolderLock(folder):
        pass


@pytest.mark.parametrize("content", ["dead", "0\n", "", "not a pid\n"])
def test_a_stale_lock_is_taken_over(tmp_path, content):
    """A run killed with SIGKILL leaves its lock behind; its pid no longer runs (or the file never got a
    pid: a kill between creating and writing it), so the next run takes the folder, and says so through
    `took_over`. A stale takeover marker of a taker that died is no obstacle either."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / LOCK_FILE).write_text(f"{dead_pid()}\n" if content == "dead" else content)
    (folder / TAKEOVER_FILE).write_text(f"{dead_pid()}\n" if content == "dead" else "")
    with FolderLock(folder) as lock:
        assert lock.took_over and (folder / LOCK_FILE).read_text().strip() == str(os.getpid())
    assert sorted(os.listdir(folder)) == []


def test_a_folder_the_lock_created_goes_when_the_run_wrote_nothing(tmp_path):
    """A run that fails before writing leaves no empty folder behind; a folder that existed stays."""
    with FolderLock(tmp_path / "new"):
        pass
    assert not (tmp_path / "new").exists()
    (tmp_path / "old").mkdir()
    with FolderLock(tmp_path / "old"):
        pass
    assert (tmp_path / "old").is_dir()


LOCK_AGAIN_AND_AGAIN = ("import sys; from minibert.io.folder_lock import FolderLock\n"
                        "print('started', flush=True)\n"
                        "for _ in range(int(sys.argv[2])):\n"
                        "    with FolderLock(sys.argv[1]):\n"
                        "        pass\n")


def test_a_lock_is_never_seen_without_its_pid(tmp_path):
    """Another process takes and lets go of the lock thousands of times while this one reads it: every read
    that finds the lock finds the owner's pid in it. A lock created empty and then written was seen without a
    pid, and a run that found it so for long enough on a busy machine took it over from a live owner."""
    folder = tmp_path / "run"
    folder.mkdir()
    locker = subprocess.Popen([sys.executable, "-c", LOCK_AGAIN_AND_AGAIN, str(folder), "3000"],
                              stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1])
    assert locker.stdout.readline().strip() == "started"
    seen = []
    while locker.poll() is None:
        try:
            seen.append((folder / LOCK_FILE).read_text())
        except FileNotFoundError:
            continue
    assert locker.returncode == 0
    assert seen and set(seen) == {f"{locker.pid}\n"}, set(seen)
    assert os.listdir(folder) == []  # no draft left behind


def test_a_lock_that_vanished_is_not_taken_over(tmp_path):
    """A lock that is gone by the time it is judged (its owner let go) is no dead run's: the next lock
    takes the folder as a new one, without `took_over`, which would let a run replace files there."""
    folder = tmp_path / "run"
    folder.mkdir()
    lock = FolderLock(folder)
    lock._take_over_stale(None)  # what acquire does when the lock vanished between its create and its read
    assert not lock.took_over and os.listdir(folder) == []


HOLD_FOR_A_SECOND = ("import sys, time; from pathlib import Path; from minibert.io.folder_lock import FolderLock\n"
                     "with FolderLock(sys.argv[1], 'data build'):\n"
                     "    print('held', flush=True)\n"
                     "    time.sleep(1.0)\n"
                     "    Path(sys.argv[2]).write_text('released')\n")


def test_a_data_build_waits_for_another_process_building_the_same_folder(tmp_path):
    """Two commands building one corpus at once used to remove each other's shards (each replaces the shard
    folder when it is done). The second now says whom it waits for, and builds once the first is done."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "corpus.txt").write_text("the cat sat on the mat .\nthe dog ran .\n\na bird sang .\nthe sun rose .\n")
    released = tmp_path / "released"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_FOR_A_SECOND, str(folder), str(released)],
                              stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1])
    assert holder.stdout.readline().strip() == "held"
    messages = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few documents to hold some out: expected with 2 documents
        shard_dir = build_pretraining_data(folder / "corpus.txt", vocab_size=80, max_seq_length=32,
                                           log=messages.append)
    assert released.exists()  # the build ran after the other process let go, not beside it
    assert f"in use by pid {holder.pid}, another data build: waiting for it" in "\n".join(messages)
    assert holder.wait() == 0
    assert read_manifest(shard_dir)["splits"]["train"]["rows"] > 0
    assert not (folder / LOCK_FILE).exists()


def test_two_runs_started_together_in_one_folder(small_corpus, tmp_path):
    """Two `pretrain --out D` at once: one trains, the other stops with `error: D is in use by pid N` and a
    non-zero status; the log holds one run."""
    folder = tmp_path / "run"
    options = [*small_options(small_corpus, steps=5000, checkpoint_every=10_000), "--out", folder,
               "--no-examples"]
    first, second = minibert("pretrain", *options), minibert("pretrain", *options)
    processes = {first.pid: first, second.pid: second}
    deadline = time.monotonic() + 120
    while all(process.poll() is None for process in processes.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    [loser] = [process for process in processes.values() if process.poll() is not None]
    [winner] = [process for process in processes.values() if process is not loser]
    code, _, stderr = finished(loser)
    assert code == 2 and stderr.strip().splitlines()[-1] == (
        f"error: {folder} is in use by pid {winner.pid}, another run writing it (lock file "
        f"{folder / LOCK_FILE}); wait for it to end, or choose another folder"), stderr
    while not any(record["kind"] == "train" for record in read_log(folder / "log.jsonl")):
        assert winner.poll() is None and time.monotonic() < deadline + 120, winner.communicate()
        time.sleep(0.1)
    winner.send_signal(signal.SIGINT)
    code, _, stderr = finished(winner)
    assert code == 130, stderr
    assert [record["kind"] for record in read_log(folder / "log.jsonl")].count("start") == 1
    assert not (folder / LOCK_FILE).exists()


# A process that starts `python -m minibert pretrain OPTIONS --out LINE` for each line it reads, and prints
# each command's exit status and what it wrote to stderr, as JSON. The package is loaded before the first
# line, so that two such processes given a line at the same moment start their runs at the same moment.
START_A_RUN_PER_LINE = """
import contextlib, io, json, sys
from minibert.cli import main
import minibert.train.pretraining_loop
print("ready", flush=True)
for line in sys.stdin:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        try:
            main(["pretrain", *sys.argv[1:], "--out", line.strip()])
        except SystemExit as end:
            status = end.code
    print(json.dumps([status, stderr.getvalue()]), flush=True)
"""


def test_two_runs_started_at_the_same_moment_never_both_write(small_corpus, tmp_path):
    """Two `pretrain` commands started at the same moment on one new --out folder, ten times over: each time
    exactly one runs and the other is refused in one line; the folder's log holds one run, each step once.
    (One try in six did log a step twice: the lock existed for a moment without its pid, and the other run
    took it over.)"""
    options = [*small_options(small_corpus, steps=2, log_every=1, eval_every=2, checkpoint_every=10),
               "--no-examples"]
    starters = [subprocess.Popen([sys.executable, "-c", START_A_RUN_PER_LINE, *map(str, options)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                 cwd=Path(__file__).resolve().parents[1]) for _ in range(2)]
    try:
        assert [starter.stdout.readline().strip() for starter in starters] == ["ready", "ready"]
        for attempt in range(10):
            folder = tmp_path / f"run{attempt}"
            for starter in starters:
                starter.stdin.write(f"{folder}\n")
                starter.stdin.flush()
            (first, first_error), (second, second_error) = [json.loads(starter.stdout.readline())
                                                            for starter in starters]
            assert sorted([first, second]) == [0, 2], (first_error, second_error)
            refusal = (second_error if second else first_error).strip()
            assert len(refusal.splitlines()) == 1 and refusal.startswith(f"error: {folder} "), refusal
            assert "is in use by pid" in refusal or "already holds a run" in refusal, refusal
            records = read_log(folder / "log.jsonl")
            assert [record["kind"] for record in records].count("start") == 1, records
            assert [record["step"] for record in records if record["kind"] == "train"] == [1, 2], records
    finally:
        for starter in starters:
            starter.stdin.close()
            starter.wait(timeout=60)


@pytest.mark.parametrize("name", ["log.jsonl", "vocab.txt", "report.html", "report.json", "loss.svg",
                                  "accuracy.svg", "notes.txt"])
def test_a_new_run_keeps_the_users_files(small_corpus, tmp_path, name):
    """A new run writes only into an empty folder or one a run of ours wrote: a file of the user's in --out
    (one the run would replace, or any other) is named and left byte for byte; --overwrite starts the run
    there, replacing the files of a run's names only. (report.html, report.json and loss.svg were replaced
    without a word: only log.jsonl and vocab.txt were checked.)"""
    folder = tmp_path / "run"
    folder.mkdir()
    mine = b"my own \xff notes\n"  # not even UTF-8
    (folder / name).write_bytes(mine)
    with pytest.raises(WouldOverwrite, match=rf"^{folder} holds files that no pretraining run wrote \({name}\);"
                                             ".*--overwrite"):
        pretrain(small_config(small_corpus, steps=1), folder, **quiet())
    assert (folder / name).read_bytes() == mine and sorted(os.listdir(folder)) == [name]
    pretrain(small_config(small_corpus, steps=1), folder, overwrite=True, **quiet())
    assert ((folder / name).read_bytes() == mine) == (name == "notes.txt")


def test_the_command_line_names_what_is_in_the_way(small_corpus, tmp_path):
    """The same from `python -m minibert pretrain`, for a folder of the user's own report and curve: one
    line, status 2, every file untouched."""
    folder = tmp_path / "run"
    folder.mkdir()
    mine = {"report.html": b"<p>mine</p>\n", "report.json": b'{"mine": 1}\n', "loss.svg": b"<svg/>\n"}
    for name, content in mine.items():
        (folder / name).write_bytes(content)
    code, _, stderr = finished(minibert("pretrain", *small_options(small_corpus, steps=1), "--out", folder))
    assert code == 2 and stderr.splitlines() == [
        f"error: {folder} holds files that no pretraining run wrote (loss.svg, report.html, report.json); give "
        "--out a new or empty folder, or pass --overwrite to start a run there (its log.jsonl, vocab.txt, "
        "report and curves replace files of the same names)"], stderr
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == mine


def test_a_run_that_died_before_its_first_checkpoint_is_started_again(small_corpus, tmp_path):
    """A folder whose run of ours ended before any checkpoint (its log begins with pretraining's "start") is
    the run's own: a new run starts there without --overwrite."""
    folder = tmp_path / "run"
    pretrain(small_config(small_corpus, steps=1), folder, **quiet())
    (folder / "checkpoint.npz").unlink()  # as if it died before its first checkpoint
    result = pretrain(small_config(small_corpus, steps=2), folder, **quiet())
    assert result.stopped == "finished" and result.step == 2
    assert [record["kind"] for record in read_log(folder / "log.jsonl")].count("start") == 1


def test_resume_restores_a_deleted_vocabulary(small_corpus, tmp_path):
    """`--resume` after vocab.txt was deleted puts back the data's vocabulary (the checkpoint's sha256 says
    it is the same one), so fill-mask can read the run again."""
    folder = tmp_path / "run"
    pretrain(small_config(small_corpus, steps=2), folder, stop_after_steps=1, **quiet())
    original = (folder / "vocab.txt").read_bytes()
    (folder / "vocab.txt").unlink()
    pretrain(None, folder, resume=True, **quiet())
    assert (folder / "vocab.txt").read_bytes() == original


def test_resume_refuses_a_log_that_is_not_a_pretraining_log(small_corpus, tmp_path):
    """`--resume` on a folder whose log.jsonl another command wrote (a fine-tuning run's, put there by
    `finetune --out R --overwrite`) says so in one line (it was `KeyError: 'losses'`), leaving the file as it
    was; with that log moved away, the checkpoint resumes."""
    folder = tmp_path / "run"
    pretrain(small_config(small_corpus, steps=2), folder, stop_after_steps=1, **quiet())
    theirs = (b'{"kind": "start", "step": 0, "time": "2026-12-06T06:00:00Z", "command": "python -m minibert '
              b'finetune --task sentiment --model R --out R --overwrite"}\n'
              b'{"kind": "train", "step": 10, "epoch": 1, "loss": 0.69, "lr": 0.001, "elapsed": 1.5}\n')
    (folder / "log.jsonl").write_bytes(theirs)
    code, _, stderr = finished(minibert("pretrain", "--resume", "--out", folder))
    assert code == 2 and stderr.splitlines() == [
        f"error: {folder / 'log.jsonl'} is not a pretraining log (another command wrote it), so {folder} holds "
        f"more than a pretraining run; to continue {folder / 'checkpoint.npz'} with a new log, move that file "
        "out of the folder first"], stderr
    assert (folder / "log.jsonl").read_bytes() == theirs
    (folder / "log.jsonl").rename(tmp_path / "their-log.jsonl")
    result = pretrain(None, folder, resume=True, **quiet())
    assert result.stopped == "finished" and result.step == 2
