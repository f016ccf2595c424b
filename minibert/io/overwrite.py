"""Never replace what a user already has without being asked: the checks behind every `--overwrite`.

A command that writes a file or a folder it did not create in this run refuses, saying what is there,
unless `--overwrite` is given; where a command picks a name itself (a backup, a default picture), it
takes the next free one instead (`free_name`).
"""

import datetime
from pathlib import Path

from minibert.errors import ConfigError, MinibertError


class WouldOverwrite(MinibertError, FileExistsError):
    """A file or folder is in the way, and replacing it was not asked for."""


def describe(path):
    """What is at `path`, for a message: 'a file of 1,234 bytes from 2026-12-01 15:00' or 'a folder of 3
    entries (a.txt, b.txt, c)'."""
    path = Path(path)
    if path.is_dir():
        names = sorted(entry.name for entry in path.iterdir())
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        return f"a folder of {len(names)} entries ({shown})"
    stat = path.stat()
    when = datetime.datetime.fromtimestamp(stat.st_mtime).strftime("%Y-%m-%d %H:%M")
    return f"a file of {stat.st_size:,} bytes from {when}"


def check_can_write(path, overwrite, option, folder=True):
    """Raise `WouldOverwrite` if `path` exists (a non-empty folder, or a file) and `overwrite` is false.
    `option` names the command-line option that chose the path, for the advice; folder=False: the path
    names a file, and a folder there is refused even with `overwrite`."""
    path = Path(path)
    if not folder and path.is_dir():
        raise WouldOverwrite(f"{path} is a folder; give {option} the name of a file (e.g. {path / 'out'})")
    if overwrite or not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return
    raise WouldOverwrite(f"{path} already exists ({describe(path)}); pass --overwrite to replace it, or "
                         f"give {option} a new name")


def check_folder_exists(path, option):
    """Refuse a file path whose folder does not exist, before any work is done: a command creates the folders
    it owns (a run's --out), never one a mistyped path names."""
    folder = Path(path).parent
    if not folder.is_dir():
        what = "is a file" if folder.exists() else "does not exist"
        raise ConfigError(f"the folder {folder} of {option} {path} {what}; create the folder first, or give "
                          f"{option} a path in a folder that exists")


def check_not_a_file(path, option):
    """Refuse a folder path where a file is, before any work is done: a command fills the folder of its --out,
    and would otherwise fail on the file only when it first writes there, perhaps after hours of work."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path} is {describe(path)}, not a folder; give {option} the name of a "
                          "folder (a new one, or one this command wrote)")


def free_name(path):
    """`path` if nothing is there, else the first free `stem.2.suffix`, `stem.3.suffix`, ...
    (`attention.svg` -> `attention.2.svg`; `05.old` -> `05.2.old`)."""
    path = Path(path)
    number = 1
    candidate = path
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.stem}.{number}{path.suffix}")
    return candidate
