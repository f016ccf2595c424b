"""Which code made a run: minibert's git commit and the versions of Python and the packages its numbers
depend on, saved in each run's record, so that runs resumed over days under changing code can say so.

The commit is read from the checkout minibert is imported from, with `+changes` when files tracked there
differ from it; "not a git checkout" when it is installed some other way.
"""

import importlib.metadata
import platform
import subprocess
from functools import cache
from pathlib import Path

PACKAGES = ("numpy", "numba", "regex")  # what the numbers are computed with (requirements.txt)


@cache  # once a process: the code a process imported does not change under it
def code_version():
    """{"minibert": commit, "python": version, package: version}: JSON-able."""
    return {"minibert": _commit(Path(__file__).resolve().parents[2]), "python": platform.python_version(),
            **{name: importlib.metadata.version(name) for name in PACKAGES}}


def _commit(folder):
    def git(*arguments):
        return subprocess.run(["git", "-C", str(folder), *arguments], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        changed = git("status", "--porcelain", "--untracked-files=no", "--", "minibert")
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"
    return commit + ("+changes" if changed else "")
