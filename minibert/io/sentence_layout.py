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

from dataclasses import dataclass
from pathlib import Path

from minibert.errors import CheckpointError, short_repr
from minibert.io.json_fields import read_object, read_objects

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
    if not (directory / MODULES_FILE).is_file():
        return None
    # Each file's fields are read with their types checked (json_fields.py): "do_lower_case": "no" is
    # refused, not read as true.
    modules = read_objects(directory / MODULES_FILE, CheckpointError, _FIX)
    kinds = [module.string("type").removeprefix(MODULE_PREFIX) for module in modules]
    unknown = [kind for kind in kinds if kind not in ("Transformer", "Pooling", "Normalize")]
    if unknown or kinds[:1] != ["Transformer"] or kinds.count("Pooling") != 1:
        raise CheckpointError(f"{directory / MODULES_FILE} lists the modules {short_repr(kinds)}; minibert runs "
                              "Transformer, then one Pooling, then optionally Normalize, and no others")
    pooling_path = directory / modules[kinds.index("Pooling")].string("path", "") / "config.json"
    settings = read_object(directory / SENTENCE_CONFIG_FILE, CheckpointError, _FIX, optional=True)
    # 3 tokens at least: [CLS], a token, [SEP]; null (sentence-transformers' None) means the model's limit.
    return SentenceLayout(pooling=read_pooling_modes(pooling_path), normalize="Normalize" in kinds,
                          max_seq_length=settings.integer("max_seq_length", None, minimum=3, null=True),
                          lowercase=settings.boolean("do_lower_case", False))


def read_pooling_modes(path):
    """The pooling modes a Pooling module's config.json turns on, refusing those minibert lacks."""
    config = read_object(path, CheckpointError, _FIX)
    switches = {key: config.boolean(key) for key in config.keys() if key.startswith("pooling_mode_")}
    modes = tuple(mode for key, mode in POOLING_MODES.items() if switches.get(key))
    others = sorted(key for key, on in switches.items() if on and key not in POOLING_MODES)
    if others or not modes:
        raise CheckpointError(f"{path} asks for pooling {short_repr(others) if others else 'of no kind'}; "
                              f"minibert pools with {', '.join(POOLING_MODES)} only")
    return modes


_FIX = "fix it, or save the model again with sentence-transformers"
