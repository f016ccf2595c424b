"""Run folders are locked while a run writes them (minibert/io/run_lock.py), and a run never replaces files
it did not write: two `pretrain --out D` started together used to mix their steps in one log.jsonl, and
`pretrain --out D` replaced a log.jsonl or vocab.txt of the user's without a word."""

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
from minibert.io.overwrite import WouldOverwrite
from minibert.io.run_lock import LOCK_FILE, TAKEOVER_FILE, RunLock
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
    try_lock = ("import sys; from minibert.io.run_lock import RunLock, FolderInUse\n"
                "try:\n    RunLock(sys.argv[1]).acquire()\nexcept FolderInUse as error:\n    print(error)")
    with RunLock(folder) as lock:
        assert (folder / LOCK_FILE).read_text().strip() == str(os.getpid())
        refused = subprocess.run([sys.executable, "-c", try_lock, str(folder)], capture_output=True, text=True,
                                 check=True, cwd=Path(__file__).resolve().parents[1])
        assert f"run is in use by pid {os.getpid()}" in refused.stdout, refused
        with RunLock(folder):
            assert lock.held
        assert (folder / LOCK_FILE).is_file()
    assert not (folder / LOCK_FILE).exists()
    with RunLock(folder):
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
    with RunLock(folder) as lock:
        assert lock.took_over and (folder / LOCK_FILE).read_text().strip() == str(os.getpid())
    assert sorted(os.listdir(folder)) == []


def test_a_folder_the_lock_created_goes_when_the_run_wrote_nothing(tmp_path):
    """A run that fails before writing leaves no empty folder behind; a folder that existed stays."""
    with RunLock(tmp_path / "new"):
        pass
    assert not (tmp_path / "new").exists()
    (tmp_path / "old").mkdir()
    with RunLock(tmp_path / "old"):
        pass
    assert (tmp_path / "old").is_dir()


HOLD_FOR_A_SECOND = ("import sys, time; from pathlib import Path; from minibert.io.run_lock import RunLock\n"
                     "with RunLock(sys.argv[1], 'data build'):\n"
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


@pytest.mark.parametrize("name", ["log.jsonl", "vocab.txt"])
def test_a_new_run_keeps_the_users_files(small_corpus, tmp_path, name):
    """A log.jsonl or vocab.txt of the user's in --out is named and left as it was; --overwrite replaces
    it."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / name).write_text("my own notes\n")
    with pytest.raises(WouldOverwrite, match=rf"{name} already exists \(a file of 13 bytes.*--overwrite"):
        pretrain(small_config(small_corpus, steps=1), folder, **quiet())
    assert (folder / name).read_text() == "my own notes\n" and sorted(os.listdir(folder)) == [name]
    pretrain(small_config(small_corpus, steps=1), folder, overwrite=True, **quiet())
    assert (folder / name).read_text() != "my own notes\n"


def test_the_command_line_names_what_is_in_the_way(small_corpus, tmp_path):
    """The same from `python -m minibert pretrain`: one line, status 2, the file untouched."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "log.jsonl").write_text("mine\n")
    code, _, stderr = finished(minibert("pretrain", *small_options(small_corpus, steps=1), "--out", folder))
    assert code == 2 and stderr.startswith("error: ") and "log.jsonl already exists" in stderr, stderr
    assert (folder / "log.jsonl").read_text() == "mine\n"


def test_resume_restores_a_deleted_vocabulary(small_corpus, tmp_path):
    """`--resume` after vocab.txt was deleted puts back the data's vocabulary (the checkpoint's sha256 says
    it is the same one), so fill-mask can read the run again."""
    folder = tmp_path / "run"
    pretrain(small_config(small_corpus, steps=2), folder, stop_after_steps=1, **quiet())
    original = (folder / "vocab.txt").read_bytes()
    (folder / "vocab.txt").unlink()
    pretrain(None, folder, resume=True, **quiet())
    assert (folder / "vocab.txt").read_bytes() == original
