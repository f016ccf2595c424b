"""A trained model and its tokenizer, from either kind of folder a user has:

- a run folder written by `python -m minibert pretrain --out DIR`: `checkpoint.npz` and `vocab.txt`;
- a HuggingFace `from_pretrained` folder: `config.json`, `model.safetensors` and `vocab.txt` or
  `tokenizer.json` (our `save_pretrained`, or one downloaded from the Hub).

Which kind a folder is, and where its vocabulary is, `model_folder.py` decides for every command.
"""

from pathlib import Path

from minibert.errors import CheckpointError
from minibert.io.checkpoint import check_weights_fit_config
from minibert.io.pretrained import VOCAB_FILE
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import BertTokenizer
from minibert.train.checkpointing import CHECKPOINT_FILE, check_vocabulary, load_checkpoint
from minibert.train.model_folder import RUN_FOLDER, check_model_folder


def load_for_inference(directory):
    """(BertForPreTraining in eval mode, BertTokenizer) from a run folder or a from_pretrained folder."""
    directory = Path(directory)
    kind, source = check_model_folder(directory)
    if kind == RUN_FOLDER:
        checkpoint = load_checkpoint(directory / CHECKPOINT_FILE)
        config = BertConfig.from_dict(checkpoint.model_config)
        check_weights_fit_config(config, checkpoint.model_state, directory / CHECKPOINT_FILE)
        model = BertForPreTraining(config)
        model.load_state_dict(checkpoint.model_state)
    else:
        model = BertForPreTraining.from_pretrained(directory, verbose=False)
    if source.name == VOCAB_FILE and (directory / CHECKPOINT_FILE).is_file():
        check_vocabulary(checkpoint, source, directory / CHECKPOINT_FILE)
    tokenizer = BertTokenizer.from_pretrained(directory)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise CheckpointError(f"{source} has {tokenizer.vocab_size} tokens but the model's vocab_size is "
                              f"{model.config.vocab_size}; the vocabulary belongs to another model")
    return model.eval(), tokenizer
