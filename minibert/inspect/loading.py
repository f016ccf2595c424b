"""A trained model and its tokenizer, from either kind of folder a user has:

- a run folder written by `python -m minibert pretrain --out DIR`: `checkpoint.npz` and `vocab.txt`;
- a HuggingFace `from_pretrained` folder: `config.json`, `model.safetensors` and `vocab.txt` or
  `tokenizer.json` (our `save_pretrained`, or one downloaded from the Hub).

Which kind a folder is, and where its vocabulary is, `model_folder.py` decides for every command.
"""

from pathlib import Path

from minibert.errors import CheckpointError
from minibert.inspect.model_folder import RUN_FOLDER, check_model_folder, read_run_folder
from minibert.io.pretrained import holds_pretraining_heads
from minibert.model import BertForPreTraining, BertModel
from minibert.tokenizer import BertTokenizer


def load_for_inference(directory):
    """(BertForPreTraining in eval mode, BertTokenizer) from a run folder or a from_pretrained folder."""
    directory = Path(directory)
    kind, source = check_model_folder(directory)
    if kind == RUN_FOLDER:
        config, state = read_run_folder(directory)
        model = BertForPreTraining(config)
        model.load_state_dict(state)
    else:
        model = BertForPreTraining.from_pretrained(directory, verbose=False)
    tokenizer = BertTokenizer.from_pretrained(directory)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise CheckpointError(f"{source} has {tokenizer.vocab_size} tokens but the model's vocab_size is "
                              f"{model.config.vocab_size}; the vocabulary belongs to another model")
    return model.eval(), tokenizer


def load_model_or_encoder(directory):
    """`load_for_inference`'s model with its heads, or, for a folder whose weights lack the pretraining heads,
    its encoder alone (a BertModel in eval mode); and the tokenizer. Such folders are a sentence-transformers
    encoder and a fine-tuned model (its task's head is passed over). For the commands that can show an
    encoder without guesses, such as `attention`."""
    kind, _ = check_model_folder(directory)
    if kind == RUN_FOLDER or holds_pretraining_heads(directory):
        return load_for_inference(directory)
    return BertModel.from_pretrained(directory, verbose=False).eval(), BertTokenizer.from_pretrained(directory)
