"""Training checkpoints: everything needed to continue a run exactly where it stopped.

A run continues *bit-exactly* (the same losses as a run that never stopped) only if every number that
influences the next step comes back: the weights, the optimizer's state, the schedule's position, the
random generator's state, the position in the data, and the run's config (the list is in the comment below).
Writing is atomic (`minibert.io.save_arrays`): a run killed while writing leaves the previous checkpoint
intact. File layout (one .npz, no pickle): arrays "model/<parameter name>", "optimizer/<position>/exp_avg",
"optimizer/<position>/exp_avg_sq"; everything else in the JSON meta. A checkpoint kept to be read, not
trained on (`keep_weights_only`), leaves out Adam's two averages: a third of the size, and refused by --resume.
"""

# What comes back, which is more than the weights:
# - the model's weights;
# - the optimizer's state: Adam's two running averages and step count for every parameter, and each group's
#   hyperparameters;
# - the schedule's position (which step's learning rate comes next);
# - the random generator's state: it draws the dropout masks. NumPy's `Generator.bit_generator.state` is a
#   small dict of integers, saved as JSON;
# - the position in the data: the epoch and how many of its batches were used. The batches of an epoch are
#   a function of (seed, epoch) (see `minibert/data/batches.py`), so the resumed run replays the epoch's
#   order and masks and skips the batches already used;
# - the run's config, so that `--resume` refuses to continue with different settings.
#
# Atomic writing: a temporary file in the same folder, flushed and fsynced, then `os.replace` over the old
# name. A run killed while writing leaves the previous checkpoint intact, plus a stray temporary file, which
# `remove_partial_files` deletes on the next start.

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minibert.errors import CheckpointError
from minibert.io.checkpoint import refuse_integer_weights
from minibert.io.npz import load_arrays, save_arrays
from minibert.tokenizer.vocab import vocab_fingerprint

CHECKPOINT_FILE = "checkpoint.npz"
FORMAT = "minibert-training-checkpoint"
VERSION = 1
MODEL_PREFIX = "model/"
OPTIMIZER_PREFIX = "optimizer/"


@dataclass
class PretrainingPosition:
    """Where a run is: the next step to take and the next batch to read."""

    step: int = 0  # optimizer steps taken
    total_steps: int = 0  # the steps the schedule was planned for
    epoch: int = 0  # the epoch the next batch comes from
    batches_into_epoch: int = 0  # batches of that epoch already used
    elapsed_seconds: float = 0.0  # training time so far, over every session of the run


@dataclass
class TrainingCheckpoint:
    run_config: dict  # PretrainingConfig.to_dict()
    model_config: dict  # BertConfig.to_dict()
    position: PretrainingPosition
    model_state: dict  # name -> array
    optimizer_state: dict  # Optimizer.state_dict() form
    scheduler_state: dict
    rng_state: dict  # numpy bit_generator.state
    data: dict  # fingerprint of the data the run trains on (corpus size and time, vocab sha256)
    weights_only: bool = False  # Adam's averages left out (keep_weights_only): read it, do not resume it


def save_checkpoint(path, model, optimizer, scheduler, run_config, position, data):
    """Write the whole training state to `path`, atomically."""
    arrays = {MODEL_PREFIX + name: array for name, array in model.state_dict().items()}
    optimizer_state = optimizer.state_dict()
    steps = {}
    for parameter_position, entries in optimizer_state["state"].items():
        for key, value in entries.items():
            if isinstance(value, np.ndarray):
                arrays[f"{OPTIMIZER_PREFIX}{parameter_position}/{key}"] = value
            else:
                steps.setdefault(str(parameter_position), {})[key] = value
    meta = {
        "format": FORMAT, "version": VERSION,
        "run_config": run_config.to_dict(), "model_config": model.config.to_dict(),
        "position": dataclasses.asdict(position),
        "optimizer": {"param_groups": optimizer_state["param_groups"], "scalars": steps},
        "scheduler": scheduler.state_dict(),
        "rng": model.rng.bit_generator.state,
        "data": data,
    }
    save_arrays(path, arrays, meta)


def load_checkpoint(path):
    """Read a `TrainingCheckpoint`; a missing, damaged or foreign file raises `CheckpointError`."""
    arrays, meta = load_arrays(path)
    _check_format(path, meta)
    try:
        model_state = {name[len(MODEL_PREFIX):]: array for name, array in arrays.items()
                       if name.startswith(MODEL_PREFIX)}
        state = {}
        for parameter_position, scalars in meta["optimizer"]["scalars"].items():
            state[int(parameter_position)] = dict(scalars)
        for name, array in arrays.items():
            if name.startswith(OPTIMIZER_PREFIX):
                parameter_position, key = name[len(OPTIMIZER_PREFIX):].split("/")
                state.setdefault(int(parameter_position), {})[key] = array
        checkpoint = TrainingCheckpoint(
            run_config=dict(meta["run_config"]), model_config=dict(meta["model_config"]),
            position=_checked_position(PretrainingPosition(**meta["position"])), model_state=model_state,
            optimizer_state={"state": state, "param_groups": meta["optimizer"]["param_groups"]},
            scheduler_state=meta["scheduler"], rng_state=meta["rng"], data=meta["data"],
            weights_only=meta.get("weights_only", False) is True)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CheckpointError(f"{path}: the training state in it is incomplete ({type(error).__name__}: "
                              f"{error}); use an earlier checkpoint or start the run again") from None
    refuse_integer_weights(checkpoint.model_state, path)
    return checkpoint


def keep_weights_only(path, out_path):
    """Write the checkpoint at `path` to `out_path` without Adam's running averages: two thirds of a
    checkpoint's bytes are those (two numbers kept for every weight), and a model that is fine-tuned, probed
    or asked to fill masks never reads them. Everything else stays, the weights bit for bit, so a folder
    holding it reads as the run itself; `--resume` refuses it, as it could not continue the run."""
    arrays, meta = load_arrays(path)
    _check_format(path, meta)
    kept = {name: array for name, array in arrays.items() if name.startswith(MODEL_PREFIX)}
    save_arrays(out_path, kept, {**meta, "weights_only": True})


def load_run_config(path):
    """The run settings (PretrainingConfig as a dict) of a checkpoint, read without its weights and optimizer state."""
    _, meta = load_arrays(path, meta_only=True)
    _check_format(path, meta)
    run_config = meta.get("run_config")
    if not isinstance(run_config, dict):
        raise CheckpointError(f"{path}: the training state in it has no run settings; use an earlier "
                              "checkpoint or start the run again")
    return run_config


def _check_format(path, meta):
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a minibert training checkpoint (format {meta.get('format')!r})")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path} has version {meta.get('version')!r}; this minibert reads {VERSION}")


def _checked_position(position):
    """The position read back: whole step and batch counts (step <= total_steps), a time >= 0."""
    counts = (position.step, position.total_steps, position.epoch, position.batches_into_epoch)
    seconds = position.elapsed_seconds
    if (not all(isinstance(count, int) and not isinstance(count, bool) and count >= 0 for count in counts)
            or position.step > position.total_steps
            or not (isinstance(seconds, int | float) and 0 <= seconds < float("inf"))):
        raise ValueError(f"the run position {dataclasses.asdict(position)} does not hold counts")
    return position


def restore(checkpoint, model, optimizer, scheduler):
    """Put the checkpoint's weights, optimizer and schedule state and random state into freshly built
    objects of the same config. Problems raise `CheckpointError` naming what does not fit."""
    model.load_state_dict(checkpoint.model_state)
    optimizer.load_state_dict(checkpoint.optimizer_state)
    scheduler.load_state_dict(checkpoint.scheduler_state)
    try:
        model.rng.bit_generator.state = checkpoint.rng_state
    except (TypeError, ValueError, KeyError, OverflowError) as error:
        raise CheckpointError(f"the checkpoint's random-generator state cannot be restored ({error})") \
            from None


def check_vocabulary(checkpoint, vocab_path, checkpoint_path):
    """Refuse a vocab.txt other than the one the run trained with (the sha256 its checkpoint recorded):
    a reordered vocab.txt of the right size loads without error and fills every [MASK] with wrong words."""
    expected = checkpoint.data.get("vocab_sha256") if isinstance(checkpoint.data, dict) else None
    if expected is not None and vocab_fingerprint(vocab_path) != expected:
        raise CheckpointError(f"{vocab_path} is not the vocabulary {checkpoint_path} was trained with (its "
                              "sha256 differs: tokens reordered, added or edited); put back the run's vocab.txt "
                              "(the data folder of its corpus holds it), or resume the run to restore it")


def remove_partial_files(folder, name=CHECKPOINT_FILE):
    """Delete temporary files that a run killed while writing `name` left behind in `folder`."""
    for stray in Path(folder).glob(f".{name}.*.tmp"):
        stray.unlink(missing_ok=True)
