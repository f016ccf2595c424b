"""Where minibert keeps the data it builds (corpora, vocabularies, shards, the fine-tuning tasks' files): one
folder, never the current one, so a command started anywhere leaves no `data/` behind it.

    MINIBERT_DATA is set             that folder
    minibert runs from its checkout  the checkout's data/, beside minibert/ (where the synthetic sets are
                                     committed)
    minibert is installed elsewhere  $XDG_CACHE_HOME/minibert, by default ~/.cache/minibert

A command's own output goes where its --out says.
"""

import os
from pathlib import Path

DATA_ENV = "MINIBERT_DATA"
CHECKOUT = Path(__file__).resolve().parents[2]


def data_folder():
    """The folder minibert's data lives in (read at each call, so a changed MINIBERT_DATA is seen)."""
    chosen = os.environ.get(DATA_ENV)
    if chosen:
        return Path(chosen).expanduser()
    if (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "minibert").is_dir():
        return CHECKOUT / "data"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "minibert"
