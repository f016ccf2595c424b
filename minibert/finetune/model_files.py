"""Reading the weights a fine-tuning run starts from, out of either kind of model folder:

- a run folder written by `python -m minibert pretrain --out DIR` (`checkpoint.npz`, `vocab.txt`);
- a HuggingFace folder (`config.json`, `model.safetensors`, `vocab.txt` or `tokenizer.json`): one saved
  with `save_pretrained`, downloaded from the Hub, a sentence-transformers folder (all-MiniLM-L6-v2), or
  one written by `finetune --out DIR`.

Either way the result is the config, every weight under HuggingFace's names with the encoder under
`bert.` (a bare `BertModel` folder has no prefix; it is added), and the vocabulary file. Which kind a
folder is, and where its vocabulary is, `train/model_folder.py` decides, for every command. The heads in
`heads.py` then take the encoder's weights and decide about their own.
"""

from pathlib import Path

from minibert.inspect.model_folder import RUN_FOLDER, check_model_folder, read_run_folder
from minibert.io import find_weights_file, normalize_hf_state, read_safetensors
from minibert.io.checkpoint import check_weights_fit_config, refuse_integer_weights
from minibert.io.pretrained import CONFIG_FILE, VOCAB_FILE, read_config
from minibert.train.checkpointing import CHECKPOINT_FILE, load_run_config

ENCODER_PREFIX = "bert."


def read_weights(model_dir):
    """Return (config, {name: array}, vocab_file) for a run folder or a HuggingFace model folder.

    vocab_file is the folder's vocab.txt, or None when it has tokenizer.json alone (the tokenizer, read by
    BertTokenizer.from_pretrained, then writes a vocab.txt beside a fine-tuned model)."""
    folder = Path(model_dir)
    kind, vocab = check_model_folder(folder)
    if kind == RUN_FOLDER:
        config, state = read_run_folder(folder)
    else:
        weights = find_weights_file(folder)
        config = read_config(folder / CONFIG_FILE)
        state, _ = normalize_hf_state(read_safetensors(weights)[0])
        check_weights_fit_config(config, state, folder)  # before a head builds a model of that config
        refuse_integer_weights(state, weights)
    if not any(name.startswith(ENCODER_PREFIX) for name in state):
        state = {ENCODER_PREFIX + name: array for name, array in state.items()}  # a bare BertModel
    return config, state, str(vocab) if vocab.name == VOCAB_FILE else None


def pretrained_length(model_dir):
    """The longest sequences the model of a run folder was pretrained on (its run's max_seq_length), or None
    for a from_pretrained folder, which does not say. Position embeddings past it were never trained."""
    path = Path(model_dir) / CHECKPOINT_FILE
    return load_run_config(path).get("max_seq_length") if path.is_file() else None
