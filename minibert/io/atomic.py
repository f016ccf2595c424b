"""Writing a file so that a crash never leaves half of it behind.

A checkpoint written in place is destroyed if the process dies halfway (a killed run, a closed laptop lid, a
full disk): the old file is already truncated and the new one is incomplete. Instead we write a temporary
file in the same folder, push it to the disk (`fsync`), and only then rename it over the old name.
`os.replace` is atomic on POSIX and Windows when both names are on the same file system, which is why the
temporary file lives in the same folder: a reader sees either the whole old file or the whole new one.
"""

import contextlib
import os
import uuid
from pathlib import Path

from minibert.errors import CheckpointError


@contextlib.contextmanager
def atomic_write(path):
    """Yield a binary file to write; when the block ends without error it replaces `path` in one step.

    If the block raises (or the disk fills up), the temporary file is removed and `path` is left exactly as
    it was. OS errors become a `CheckpointError` that names the file.
    """
    path = Path(path)
    temp_path = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        # os.open with mode 0o666 lets the user's umask decide the permissions, as for any new file
        # (tempfile.mkstemp would make it readable by its owner only).
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        descriptor = os.open(temp_path, flags, 0o666)
    except OSError as error:
        raise CheckpointError(
            f"cannot create a file in {path.parent} to write {path.name}: {error.strerror or error}; "
            "check that the folder exists and is writable"
        ) from error
    try:
        with os.fdopen(descriptor, "wb") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp_path, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.remove(temp_path)
        if isinstance(error, OSError):
            raise CheckpointError(
                f"writing {path} failed: {error.strerror or error}; the previous {path.name}, if any, is "
                "unchanged. Free some disk space or choose another folder, then save again"
            ) from error
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder):
    """Make the rename itself durable: on POSIX a folder's entries reach the disk only when it is synced."""
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
