"""Where the ladder's numbers come from, kept beside them: each rung's checkpoint named by the sha256 of its
weights file, the pretraining log that made it, and, from the task folders, the splits' hashes and the
versions of the packages the tasks are cut from.

The first run of a ladder folder pins its checkpoints (`checkpoints.json`, the logs copied into
`checkpoints/`); a later run in the same folder whose rung folder holds other weights is refused, since its
runs would sit in one table beside runs of another model.
"""

import importlib.metadata
import json
from pathlib import Path

from minibert.errors import ConfigError
from minibert.experiments.ladder_tasks import SPLITS_FILE, file_sha256, read_splits
from minibert.inspect.model_folder import weights_file
from minibert.io.atomic import atomic_write
from minibert.io.packaged_model import PIP_NAME
from minibert.train.logs import LOG_FILE

CHECKPOINTS_FILE = "checkpoints.json"
LOGS_FOLDER = "checkpoints"


def describe_checkpoint(folder, packaged=False):
    """{"folder", "weights", "sha256"} of a rung's model folder, and the package's version when it is the
    model package's."""
    weights = weights_file(folder)
    found = {"folder": str(folder), "weights": weights.name, "sha256": file_sha256(weights)}
    if packaged:
        found["package"] = f"{PIP_NAME} {importlib.metadata.version(PIP_NAME)}"
    return found


def pin_checkpoints(found, out_dir):
    """Record the checkpoints `found` ({rung: describe_checkpoint(...)}) in `out_dir`, each with a copy of its
    pretraining log; refuse a rung whose weights differ from those its earlier runs here were made with."""
    path = Path(out_dir) / CHECKPOINTS_FILE
    pinned = read_pinned(path)
    for rung, checkpoint in found.items():
        before = pinned.get(rung, {}).get("sha256")
        if before not in (None, checkpoint["sha256"]):
            raise ConfigError(f"the rung {rung}'s weights ({checkpoint['folder']}, sha256 {checkpoint['sha256'][:12]}) "
                              f"are not those the runs in {out_dir} were made with (sha256 {before[:12]}); give "
                              "that checkpoint back with --rung, or give another --out")
    for rung, checkpoint in found.items():
        if rung not in pinned:
            pinned[rung] = {**checkpoint, "log": keep_log(rung, checkpoint, out_dir)}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as file:
        file.write((json.dumps(pinned, indent=1) + "\n").encode("utf-8"))


def read_pinned(path):
    """{rung: checkpoint} pinned in `path`, {} when there is none yet."""
    if not path.is_file():
        return {}
    try:
        pinned = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        pinned = None
    if not isinstance(pinned, dict):
        raise ConfigError(f"{path} is damaged (not the JSON of the pinned checkpoints); delete it, and the next "
                          "run pins the rungs' checkpoints as they are now")
    return pinned


def keep_log(rung, checkpoint, out_dir):
    """Copy the rung folder's pretraining log beside the results (the logs are small); its path there, or None
    when the folder has none (a downloaded model)."""
    log = Path(checkpoint["folder"]) / LOG_FILE
    if not log.is_file():
        return None
    kept = Path(LOGS_FOLDER) / f"{rung}-{checkpoint['sha256'][:12]}-{LOG_FILE}"
    (Path(out_dir) / LOGS_FOLDER).mkdir(parents=True, exist_ok=True)
    with atomic_write(Path(out_dir) / kept) as file:
        file.write(log.read_bytes())
    return str(kept)


def ladder_provenance(out_dir):
    """What results.json says of where its runs come from: the pinned checkpoints and each task's splits."""
    out_dir = Path(out_dir)
    checkpoints = read_pinned(out_dir / CHECKPOINTS_FILE)
    tasks = {folder.name: read_splits(folder) for folder in sorted((out_dir / "tasks").glob("*"))
             if (folder / SPLITS_FILE).is_file()}
    return {"checkpoints": checkpoints, "tasks": tasks}
