"""Reading the weights a fine-tuning run starts from, out of either kind of model folder:

- a run folder written by `python -m minibert pretrain --out DIR` (`checkpoint.npz`, `vocab.txt`);
- a HuggingFace folder (`config.json`, `model.safetensors`, `vocab.txt`): one saved with
  `save_pretrained`, downloaded from the Hub, or written by `finetune --out DIR`.

Either way the result is the config, every weight under HuggingFace's names with the encoder under
`bert.` (a bare `BertModel` folder has no prefix; it is added), and the vocabulary file. The heads in
`heads.py` then take the encoder's weights and decide about their own.
"""

from pathlib import Path

from minibert.errors import CheckpointError
from minibert.io import find_weights_file, normalize_hf_state, read_safetensors
from minibert.io.checkpoint import check_weights_fit_config
from minibert.io.pretrained import CONFIG_FILE, VOCAB_FILE, read_config
from minibert.model import BertConfig
from minibert.train.checkpointing import CHECKPOINT_FILE, check_vocabulary, load_checkpoint, load_run_config

ENCODER_PREFIX = "bert."


def read_weights(model_dir):
    """Return (config, {name: array}, vocab_file) for a run folder or a HuggingFace model folder."""
    folder = Path(model_dir)
    if not folder.is_dir():
        raise CheckpointError(f"model folder {folder} does not exist; give a run folder (made by `python -m "
                              f"minibert pretrain --out DIR`) or a from_pretrained folder ({CONFIG_FILE}, "
                              f"model.safetensors, {VOCAB_FILE})")
    if (folder / CHECKPOINT_FILE).is_file():
        checkpoint = load_checkpoint(folder / CHECKPOINT_FILE)
        config, state = BertConfig.from_dict(checkpoint.model_config), checkpoint.model_state
        if (folder / VOCAB_FILE).is_file():
            check_vocabulary(checkpoint, folder / VOCAB_FILE, folder / CHECKPOINT_FILE)
    else:
        weights = find_weights_file(folder)
        config = read_config(folder / CONFIG_FILE)
        state, _ = normalize_hf_state(read_safetensors(weights)[0])
    if not (folder / VOCAB_FILE).is_file():
        raise CheckpointError(f"{folder} has no {VOCAB_FILE}: the model cannot read text without the "
                              "vocabulary it was trained with; copy it into the folder")
    check_weights_fit_config(config, state, folder)  # before a head builds a model of that config
    if not any(name.startswith(ENCODER_PREFIX) for name in state):
        state = {ENCODER_PREFIX + name: array for name, array in state.items()}  # a bare BertModel
    return config, state, str(folder / VOCAB_FILE)


def pretrained_length(model_dir):
    """The longest sequences the model of a run folder was pretrained on (its run's max_seq_length), or None
    for a from_pretrained folder, which does not say. Position embeddings past it were never trained."""
    path = Path(model_dir) / CHECKPOINT_FILE
    return load_run_config(path).get("max_seq_length") if path.is_file() else None
