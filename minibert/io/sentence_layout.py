"""The sentence-transformers folder layout: how a BERT encoder becomes one vector per sentence.

Pooling turns the (S, H) token vectors into one H vector: the mean over the real tokens, token 0 ([CLS]), or
the largest value of each feature (several modes at once are concatenated, in sentence-transformers' order).
Normalize scales the result to length 1, so that a dot product is the cosine similarity (Reimers and
Gurevych 2019, "Sentence-BERT", section 3). This module reads the folder's files into a `SentenceLayout`; a
module type or pooling mode it does not know is refused by name rather than skipped.
"""

# A sentence-transformers model (e.g. all-MiniLM-L6-v2) is a HuggingFace BERT folder, whose `model.safetensors`
# holds the encoder alone (no MLM or NSP head), plus a pipeline of modules run after it:
#
#     modules.json                [{"type": "sentence_transformers.models.Transformer", "path": ""},
#                                  {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"},
#                                  {"type": "sentence_transformers.models.Normalize", "path": "2_Normalize"}]
#     1_Pooling/config.json       {"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false, ...}
#     sentence_bert_config.json   {"max_seq_length": 256, "do_lower_case": false}

import json
from dataclasses import dataclass
from pathlib import Path

from minibert.errors import CheckpointError

MODULES_FILE = "modules.json"
SENTENCE_CONFIG_FILE = "sentence_bert_config.json"
MODULE_PREFIX = "sentence_transformers.models."

# Config key -> our name for the mode, in the order sentence-transformers concatenates them.
POOLING_MODES = {"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
                 "pooling_mode_mean_tokens": "mean"}


@dataclass(frozen=True)
class SentenceLayout:
    pooling: tuple = ("mean",)  # modes, concatenated in this order: "cls", "max", "mean"
    normalize: bool = False  # scale each embedding to length 1
    max_seq_length: int | None = None  # longer inputs are truncated (None: the model's position limit)
    lowercase: bool = False  # sentence-transformers lowercases the text itself before tokenizing


def read_sentence_layout(directory):
    """The folder's `SentenceLayout`, or None when it has no modules.json (a plain BERT folder)."""
    directory = Path(directory)
    modules = _read_json(directory / MODULES_FILE)
    if modules is None:
        return None
    if not isinstance(modules, list) or not all(isinstance(module, dict) for module in modules):
        raise CheckpointError(f"{directory / MODULES_FILE} must be a list of modules ({{type, path}} objects)")
    kinds = [str(module.get("type", "")).removeprefix(MODULE_PREFIX) for module in modules]
    unknown = [kind for kind in kinds if kind not in ("Transformer", "Pooling", "Normalize")]
    if unknown or kinds[:1] != ["Transformer"] or kinds.count("Pooling") != 1:
        raise CheckpointError(f"{directory / MODULES_FILE} lists the modules {kinds}; minibert runs "
                              "Transformer, then one Pooling, then optionally Normalize, and no others")
    pooling_path = directory / modules[kinds.index("Pooling")].get("path", "") / "config.json"
    settings = _read_json(directory / SENTENCE_CONFIG_FILE) or {}
    max_seq_length = settings.get("max_seq_length")
    if max_seq_length is not None and (not isinstance(max_seq_length, int) or max_seq_length < 3):
        raise CheckpointError(f"{directory / SENTENCE_CONFIG_FILE}: max_seq_length must be an integer >= 3 "
                              f"([CLS], a token, [SEP]), got {max_seq_length!r}")
    return SentenceLayout(pooling=read_pooling_modes(pooling_path), normalize="Normalize" in kinds,
                          max_seq_length=max_seq_length,
                          lowercase=bool(settings.get("do_lower_case", False)))


def read_pooling_modes(path):
    """The pooling modes a Pooling module's config.json turns on, refusing those minibert lacks."""
    config = _read_json(path)
    if not isinstance(config, dict):
        raise CheckpointError(f"{path} is missing or not a JSON object; the Pooling module needs it")
    modes = tuple(mode for key, mode in POOLING_MODES.items() if config.get(key))
    others = sorted(key for key, value in config.items()
                    if key.startswith("pooling_mode_") and key not in POOLING_MODES and value)
    if others or not modes:
        raise CheckpointError(f"{path} asks for pooling {others or 'of no kind'}; minibert pools with "
                              f"{', '.join(POOLING_MODES)} only")
    return modes


def _read_json(path):
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path} is not JSON ({error}); fix or replace it") from None
