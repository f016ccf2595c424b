"""HuggingFace checkpoint names: what real BERT files contain besides the parameters we expect.

Our `state_dict()` uses HuggingFace's parameter names, so most names in a real `model.safetensors` map to
themselves. Real files, written over the years by different tools, also carry the kinds listed below.

And one kind of file we never open: `pytorch_model.bin`, a pickle.
"""

# - **old LayerNorm names**: Google's TensorFlow checkpoint called the LayerNorm scale and shift `gamma` and
#   `beta`, and the first PyTorch ports kept them (`bert.embeddings.LayerNorm.gamma`). They are today's
#   `weight` and `bias`;
# - **buffers**: `position_ids` (0, 1, ..., 511) and an all-zero `token_type_ids`, which HuggingFace keeps
#   on the embeddings module for convenience. They are not learned, so we skip them, and say so;
# - **tied copies**: the MLM decoder shares its weight with the word embeddings and its bias with
#   `cls.predictions.bias`. Recent files leave the copies out; older ones may hold them.

from pathlib import Path

import numpy as np

from minibert.errors import CheckpointError

# Old name ending -> today's name ending.
LEGACY_SUFFIXES = {".LayerNorm.gamma": ".LayerNorm.weight", ".LayerNorm.beta": ".LayerNorm.bias"}

# Buffer names (after an optional "bert." prefix) -> why they are skipped.
KNOWN_BUFFERS = {
    "embeddings.position_ids": "a buffer of position indices 0..max_position_embeddings-1, not a learned "
                               "weight; minibert builds positions itself",
    "embeddings.token_type_ids": "an all-zero buffer of default segment ids, not a learned weight",
}

# Tied copy -> the parameter it is a copy of (both names are HuggingFace's).
TIED_COPIES = {
    "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}

# The first bytes of a PyTorch checkpoint: a zip (torch.save since 1.6) or a bare pickle (protocol 2 to 5).
PICKLE_SIGNATURES = (b"PK\x03\x04", b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")


def modern_name(name):
    """Today's name for a parameter: `...LayerNorm.gamma` -> `...LayerNorm.weight`, `beta` -> `bias`."""
    for old, new in LEGACY_SUFFIXES.items():
        if name.endswith(old):
            return name[: -len(old)] + new
    return name


def normalize_hf_state(tensors):
    """Turn the tensors of a HuggingFace BERT file into parameters under today's names.

    Returns `(kept, skipped)`: `kept` maps modern names to arrays; `skipped` maps each dropped name to the
    reason, so a loader can report it. Tied copies are dropped when the parameter they copy is present
    (after checking they are equal), and renamed to it when it is not. Two names that become the same name,
    or a tied copy that differs from its parameter, raise `CheckpointError`.
    """
    kept, skipped = {}, {}
    for name, array in tensors.items():
        buffer_reason = KNOWN_BUFFERS.get(name.removeprefix("bert."))
        if buffer_reason is not None:
            skipped[name] = buffer_reason
            continue
        new_name = modern_name(name)
        if new_name in kept:
            raise CheckpointError(f"the checkpoint holds both {new_name!r} and an older name for it; remove "
                                  "one of them from the file")
        kept[new_name] = array
    for copy, original in TIED_COPIES.items():
        if copy not in kept:
            continue
        if original not in kept:
            kept[original] = kept.pop(copy)
            continue
        if not np.array_equal(kept[copy], kept[original]):
            raise CheckpointError(f"the checkpoint's {copy!r} should be a tied copy of {original!r} but "
                                  "differs from it; this model was not trained with tied weights, which "
                                  "minibert's BERT requires")
        del kept[copy]
        skipped[copy] = f"a tied copy of {original}, which is loaded instead"
    return kept, skipped


def looks_like_pickle(first_bytes):
    """True when a file's first bytes are those of a PyTorch checkpoint (a pickle, or a zip of one)."""
    return first_bytes.startswith(PICKLE_SIGNATURES)


def refuse_pickle_checkpoint(path):
    """Raise a `CheckpointError` explaining why a pickle checkpoint such as pytorch_model.bin is refused."""
    folder = Path(path).parent
    raise CheckpointError(
        f"{path} is a PyTorch pickle checkpoint, and minibert never loads pickles: unpickling runs whatever "
        "code the file names, so a downloaded checkpoint could take over your computer. Convert it once to "
        "safetensors, in a Python with torch and transformers and only if you trust the file:\n"
        "    from transformers import BertForPreTraining\n"
        f"    model = BertForPreTraining.from_pretrained({str(folder)!r})\n"
        f"    model.save_pretrained({str(folder)!r}, safe_serialization=True)\n"
        f"then load {folder} again: it will read model.safetensors."
    )


def find_weights_file(folder):
    """Return the path of `model.safetensors` in a HuggingFace model folder, or raise a helpful error."""
    folder = Path(folder)
    weights = folder / "model.safetensors"
    if weights.is_file():
        return weights
    if (folder / "model.safetensors.index.json").is_file():
        raise CheckpointError(f"{folder} holds a checkpoint split into several safetensors files, which "
                              "minibert does not read; BERT fits in one file: re-save it with "
                              "save_pretrained(folder, max_shard_size='10GB')")
    if (folder / "pytorch_model.bin").is_file():
        refuse_pickle_checkpoint(folder / "pytorch_model.bin")
    if not folder.is_dir():
        raise CheckpointError(f"{folder} is not a folder; from_pretrained needs a HuggingFace model folder "
                              "with config.json and model.safetensors")
    raise CheckpointError(f"{folder} has no model.safetensors; a HuggingFace model folder holds it next to "
                          "config.json (download it, or save one with save_pretrained)")
