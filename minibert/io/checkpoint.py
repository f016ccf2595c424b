"""A model in minibert's own format: one .npz file holding the config as JSON and every weight by name.

`model.save(path)` and `BertForPreTraining.load(path)` call these. The container (`npz.py`) never uses
pickle and checks every array before allocating it; this module adds what a model needs: the config, the
class it was saved from, and matching the names to the model being built.
"""

import numpy as np

from minibert.config import BertConfig
from minibert.errors import CheckpointError
from minibert.io.npz import load_arrays, save_arrays

FORMAT = "minibert-model"
VERSION = 1
ENCODER_PREFIX = "bert."  # where a model with heads keeps its encoder (HF's `base_model_prefix`)


def save_model(model, path):
    """Write `model`'s config and weights to `path` (atomically: a crash leaves the old file intact)."""
    meta = {"format": FORMAT, "version": VERSION, "model_class": type(model).__name__,
            "config": model.config.to_dict(), "dtype": str(model.dtype)}
    save_arrays(path, model.state_dict(), meta)


def load_model(cls, path):
    """Build a `cls` from the file's config and load its weights, in the dtype they were saved in.

    The model comes back in training mode, as a new one does: loading is mostly for resuming training.
    """
    arrays, meta = load_arrays(path)
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a minibert model file (format {meta.get('format')!r}); "
                              "for a HuggingFace folder use from_pretrained")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path} has format version {meta.get('version')!r}; this minibert reads "
                              f"version {VERSION}")
    config = BertConfig.from_dict(meta.get("config", {}))
    check_weights_fit_config(config, arrays, path)
    refuse_integer_weights(arrays, path)
    model = cls(config)
    state, _ = fit_to_model(arrays, model)
    model.to(stored_dtype(state))
    model.load_state_dict(state)
    return model


def check_weights_fit_config(config, state, source):
    """Refuse a config that disagrees with the weights stored beside it, before a model of it is built.

    A config.json claiming `vocab_size: 20000000` next to weights of 20 rows would otherwise build (and
    initialise) gigabytes of embeddings, only for loading to find that no weight fits them. The sizes a
    config decides are read off the stored shapes: the embedding tables and the feed-forward's width.
    """
    hidden = config.hidden_size
    expected = {"embeddings.word_embeddings.weight": ("vocab_size", (config.vocab_size, hidden)),
                "embeddings.position_embeddings.weight": ("max_position_embeddings",
                                                          (config.max_position_embeddings, hidden)),
                "embeddings.token_type_embeddings.weight": ("type_vocab_size", (config.type_vocab_size, hidden)),
                "encoder.layer.0.intermediate.dense.weight": ("intermediate_size",
                                                              (config.intermediate_size, hidden))}
    for name, array in state.items():
        for suffix, (field, shape) in expected.items():
            if (name == suffix or name.endswith("." + suffix)) and tuple(np.shape(array)) != shape:
                raise CheckpointError(
                    f"{source}: the config says {field}={getattr(config, field)} and hidden_size={hidden}, so "
                    f"{name} should have shape {shape}, but the stored weight has {tuple(np.shape(array))}; "
                    "the config and the weights belong to different models")


def refuse_integer_weights(state, source):
    """Refuse a weight stored as integers (or booleans, or complex numbers) rather than floats, by name.

    Loading casts every weight to the model's float dtype, and an int32 weight would go through without a
    word. But BERT's weights are real numbers: a file that stores them as integers is quantized (int8
    values whose scales are kept elsewhere, in other tensors or in a library's own format) or damaged.
    Cast as they are, the integers give a model that runs and computes nonsense, which a one-line note
    would not prevent; so loading stops and says what the file holds. (HuggingFace's integer buffers,
    such as position_ids, are set aside before this check: `hf_names.py`.)
    """
    for name, array in state.items():
        dtype = np.asarray(array).dtype
        if dtype.kind != "f":
            raise CheckpointError(f"{source}: the weight {name} is stored as {dtype}, but BERT's weights are "
                                  "floating-point numbers (integers mean a quantized or damaged file, and cast "
                                  "to float they would compute nonsense); use the model's float32, float16 or "
                                  "bfloat16 weights")


def fit_to_model(state, model):
    """Match checkpoint names to the model's, across the "bert." prefix of a model with heads.

    A `BertModel`'s names have no "bert." prefix; those of `BertForPreTraining` (and HF's) do. When the model
    has no "bert." names but the checkpoint does, the prefix is dropped and the heads' weights are set
    aside. When the model has them and the checkpoint has none (a bare encoder, such as a
    sentence-transformers model), the prefix is added, and the heads are left for the caller to find missing.
    Returns (state for the model, {name: why it was left out}).
    """
    model_prefixed = any(name.startswith(ENCODER_PREFIX) for name in model.state_dict())
    state_prefixed = any(name.startswith(ENCODER_PREFIX) for name in state)
    if model_prefixed and not state_prefixed:
        return {ENCODER_PREFIX + name: array for name, array in state.items()}, {}
    if model_prefixed or not state_prefixed:
        return state, {}
    fitted, unused = {}, {}
    for name, array in state.items():
        if name.startswith(ENCODER_PREFIX):
            fitted[name[len(ENCODER_PREFIX):]] = array
        else:
            unused[name] = f"a head's weight, unused by {type(model).__name__} (the encoder alone)"
    return fitted, unused


def stored_dtype(state):
    """float64 when every stored float array is float64, else float32 (float16/bfloat16 files too)."""
    floats = [array.dtype for array in state.values() if np.asarray(array).dtype.kind == "f"]
    return np.float64 if floats and all(dtype == np.float64 for dtype in floats) else np.float32
