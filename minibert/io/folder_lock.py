"""A lock on a folder, so that two processes never write it at the same time: a run's folder, or the data
folder whose shards are being built.

Two `pretrain --out D` started together both found D free ("no checkpoint yet") and both wrote it: one
log.jsonl held the steps of both runs, and the checkpoint was whichever saved last. Checking and then
writing is a race; creating a name that must not exist is not: `os.link(draft, path)` succeeds for exactly
one process, atomically, on every POSIX file system and on NTFS, and the lock appears with its pid in it.
"""

# The lock file `D/.lock` holds the pid of the run that owns the folder. It is written whole under a draft
# name, then linked to `.lock`. Created empty and then written (O_EXCL), a lock was seen without a pid for
# a moment, and a second run that waited that moment out on a busy machine took it over while its owner ran
# on: both wrote the folder. So a lock without a pid is never a live run's.
# A run killed with SIGKILL (or a power cut) cannot remove its lock, so a lock whose pid no longer runs is
# stale: the next run takes it over, under a short-lived second lock (`D/.lock.takeover`) so that two runs
# finding the same stale lock do not both take it. The lock belongs to a process: within one process (a
# notebook, the tests) a second run object on the folder shares it, and the file goes when the last one
# releases it. It is released when the run ends, however it ends (`with FolderLock(D): ...`); a folder the
# lock created and the run left empty (it failed before writing anything) is removed with it.
#
# A run refuses a folder in use: two runs in one folder are a mistake. Building data waits instead
# (`wait=True`): two commands started together on the same corpus both need its shards, and the second
# finds them built once the first is done.

import contextlib
import os
import tempfile
import time
from pathlib import Path

from minibert.errors import MinibertError

LOCK_FILE = ".lock"
TAKEOVER_FILE = ".lock.takeover"
POLL_SECONDS = 0.1  # how often a waiting lock looks again
_HELD_HERE = {}  # lock file (resolved) -> how many FolderLocks of this process hold it


class FolderInUse(MinibertError, OSError):
    """Another running process holds the folder's lock."""


def pid_is_running(pid):
    """Whether a process with this pid exists (signal 0 checks without sending anything). 0 and negative
    numbers name process groups, not a process: never a lock's owner."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    except (OverflowError, ValueError, OSError):
        return False
    return True


def read_pid(path):
    """The pid written in a lock file, or None if it is empty, unreadable or not a number."""
    try:
        text = Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _create(path):
    """Create `path` holding our pid; False if it exists already. The file appears atomically and whole: a
    draft holding the pid is linked to `path` (a link, like O_EXCL, fails when the name exists)."""
    descriptor, draft = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".draft", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(f"{os.getpid()}\n")
        os.chmod(draft, 0o644)  # readable by the other users' runs that find it, as any lock
        os.link(draft, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(draft)
    return True


class FolderLock:
    """`with FolderLock(folder):` holds `folder/.lock` for the block (the folder is created if needed).

    When another live process holds it: raises `FolderInUse` naming the pid, or with `wait=True` says so
    once through `notify` and waits until that process releases it (or ends)."""

    def __init__(self, folder, what="run", wait=False, notify=print):
        self.folder, self.what = Path(folder), what
        self.wait, self.notify = wait, notify
        self.path = self.folder / LOCK_FILE
        self.held = False
        self.created_folder = False
        self.took_over = False  # whether the folder held the stale lock of a run that died

    def acquire(self):
        self.created_folder = not self.folder.exists()
        self.folder.mkdir(parents=True, exist_ok=True)
        key = self.path.resolve()
        if _HELD_HERE.get(key) and read_pid(self.path) == os.getpid():
            _HELD_HERE[key] += 1
            self.held = True
            return self
        waited_for = None
        while not _create(self.path):
            owner = read_pid(self.path)
            if pid_is_running(owner):
                if not self.wait:
                    raise FolderInUse(f"{self.folder} is in use by pid {owner}, another {self.what} writing "
                                      f"it (lock file {self.path}); wait for it to end, or choose another "
                                      "folder")
                if owner != waited_for:
                    self.notify(f"{self.folder} is in use by pid {owner}, another {self.what}: waiting for it")
                    waited_for = owner
                time.sleep(POLL_SECONDS)
                continue
            self._take_over_stale(owner)
        _HELD_HERE[key] = 1
        self.held = True
        return self

    def _take_over_stale(self, owner):
        """Remove the lock of a process that no longer runs, unless another run got to it first."""
        takeover = self.folder / TAKEOVER_FILE
        if not _create(takeover):
            if not pid_is_running(read_pid(takeover)):
                takeover.unlink(missing_ok=True)  # a taker that died in these few lines
            time.sleep(0.01)
            return
        try:
            if read_pid(self.path) == owner:  # still the stale lock, not a new one of a faster run
                with contextlib.suppress(FileNotFoundError):  # gone: its owner let go, it did not die
                    self.path.unlink()
                    self.took_over = True
        finally:
            takeover.unlink(missing_ok=True)

    def release(self):
        """Remove the lock if it is ours (a lock file that holds another pid is not touched)."""
        if not self.held:
            return
        self.held = False
        key = self.path.resolve()
        _HELD_HERE[key] = _HELD_HERE.get(key, 1) - 1
        if _HELD_HERE[key] <= 0 and read_pid(self.path) == os.getpid():
            del _HELD_HERE[key]
            with contextlib.suppress(OSError):
                self.path.unlink()
                if self.created_folder:
                    self.folder.rmdir()  # fails, as it should, unless the folder is empty

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
