"""HuggingFace's folder layout, read and written with NumPy alone: config.json + model.safetensors.

`BertForPreTraining.from_pretrained(folder)` and `model.save_pretrained(folder)` call these. A folder written
by `transformers`' `save_pretrained(safe_serialization=True)` loads here, and a folder written here loads in
`transformers`, so a model can move to PyTorch when it outgrows one CPU.
"""

# Real folders differ from the ideal, and loading copes (the details are in `hf_names.py`):
# - config.json carries keys BERT never used (`architectures`, `model_type`, `dtype`, ...): they are kept in
#   `config.extra` and written back on saving;
# - the tied decoder weight `cls.predictions.decoder.weight` is usually absent: the model ties it anyway;
# - old files carry buffers (`bert.embeddings.position_ids`) and LayerNorm `gamma`/`beta`: buffers are
#   skipped and the names modernised, and `verbose=True` says so;
# - `pytorch_model.bin` is a pickle: it is refused, with instructions to convert it.
# Names that are missing, unexpected or of the wrong shape are reported by name.

import json
from pathlib import Path

from minibert.config import BertConfig
from minibert.errors import CheckpointError, MinibertError
from minibert.io.atomic import atomic_write
from minibert.io.checkpoint import check_weights_fit_config, fit_to_model, refuse_integer_weights, stored_dtype
from minibert.io.hf_names import find_weights_file, modern_name, normalize_hf_state
from minibert.io.safetensors import read_safetensors, tensor_names, write_safetensors
from minibert.io.strict_json import parse_json_object

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
VOCAB_FILE = "vocab.txt"

# A head's parameter prefix -> (its name, what a model without it cannot do).
HEADS = {"cls.predictions.": ("MLM head", "fill in [MASK]"),
         "cls.seq_relationship.": ("NSP head", "tell IsNext from NotNext")}


def load_pretrained(cls, directory, dtype=None, strict=True, verbose=True):
    """Build a `cls` from a HuggingFace folder; see `SavableModel.from_pretrained`. Returns it in eval mode,
    as `transformers` does."""
    directory = Path(directory)
    weights_path = find_weights_file(directory)
    config = read_config(directory / CONFIG_FILE)
    tensors, _ = read_safetensors(weights_path)
    renamed = [name for name in tensors if modern_name(name) != name]
    state, skipped = normalize_hf_state(tensors)
    check_weights_fit_config(config, state, directory / CONFIG_FILE)  # before building: it may claim GBs
    refuse_integer_weights(state, weights_path)
    model = cls(config)
    state, unused = fit_to_model(state, model)
    skipped.update(unused)
    if strict:
        refuse_missing_heads(weights_path, model, state)
    model.to(dtype or stored_dtype(state))
    missing, unexpected = model.load_state_dict(state, strict=strict)
    vocab_path = directory / VOCAB_FILE
    model.vocab_file = str(vocab_path) if vocab_path.is_file() else None
    if verbose:
        _report(weights_path, model, len(state) - len(unexpected), renamed, skipped, missing, unexpected)
    return model.eval()


def holds_pretraining_heads(directory):
    """Whether a from_pretrained folder's weights hold every head of `BertForPreTraining` (HEADS), read from
    the weights file's header. An encoder saved alone (sentence-transformers', HF's `BertModel`) holds none,
    and a fine-tuned model holds its task's head instead."""
    names = tensor_names(find_weights_file(Path(directory)))
    return all(any(name.startswith(prefix) for name in names) for prefix in HEADS)


def refuse_missing_heads(path, model, state):
    """One clear line when a file lacks only the model's heads, instead of a list of a hundred names.

    Such a file is an encoder saved alone (HF's `BertModel`), e.g. every sentence-transformers model.
    """
    missing = [name for name in model.state_dict() if name not in state]
    heads = {prefix: head for prefix, head in HEADS.items() if any(name.startswith(prefix) for name in missing)}
    if not heads or not all(name.startswith(tuple(heads)) for name in missing):
        return
    names = " and no ".join(f"{name} ({prefix}*)" for prefix, (name, _) in heads.items())
    abilities = " or ".join(ability for _, ability in heads.values())
    raise CheckpointError(f"{path} has no {names}, so this model cannot {abilities}; load the encoder alone "
                          "with BertModel.from_pretrained (for sentence embeddings: python -m minibert embed), "
                          "or pass strict=False to leave the heads at their initial values")


def read_config(path):
    """A `BertConfig` from a config.json (HuggingFace's or Google's bert_config.json)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CheckpointError(f"{path} not found: a HuggingFace model folder holds config.json next to "
                              "model.safetensors") from None
    except (OSError, UnicodeDecodeError) as error:
        raise CheckpointError(f"cannot read {path}: {error}") from None
    values = parse_json_object(text, path, what="config")
    model_type = values.get("model_type", "bert")
    if model_type != "bert":
        raise CheckpointError(f"{path} describes a {model_type!r} model; minibert loads BERT ('bert') only")
    try:
        return BertConfig.from_dict(values)
    except MinibertError as error:
        raise CheckpointError(f"{path}: {error}") from None


def save_pretrained(model, directory):
    """Write config.json, model.safetensors (and vocab.txt, if the model came with one) into `directory`."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CheckpointError(f"cannot create the folder {directory}: {error.strerror or error}") from None
    values = model.config.to_dict()
    # What transformers needs to pick the class and dtype; the rest of `extra` is written back as it came.
    values.update(model_type="bert", architectures=[type(model).__name__], dtype=str(model.dtype))
    with atomic_write(directory / CONFIG_FILE) as file:
        file.write((json.dumps(values, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    # The tied decoder weight is not in state_dict(), so, as in transformers' own files, it is not written.
    # "format": "pt" tells transformers the tensors are laid out as PyTorch's (it refuses files without it).
    write_safetensors(directory / WEIGHTS_FILE, model.state_dict(), metadata={"format": "pt"})
    vocab_path = directory / VOCAB_FILE
    if model.vocab_file is not None and Path(model.vocab_file).resolve() != vocab_path.resolve():
        with atomic_write(vocab_path) as file:
            file.write(Path(model.vocab_file).read_bytes())


def _report(path, model, loaded, renamed, skipped, missing, unexpected):
    print(f"from_pretrained: {type(model).__name__} ({model.num_parameters():,} parameters, {model.dtype}): "
          f"loaded {loaded} tensors from {path}")
    if renamed:
        print(f"  renamed {len(renamed)} old LayerNorm gamma/beta names to weight/bias")
    for name, reason in skipped.items():
        print(f"  skipped {name}: {reason}")
    if missing:
        print(f"  missing, left at their initial values: {', '.join(missing)}")
    if unexpected:
        print(f"  unexpected, ignored: {', '.join(unexpected)}")
