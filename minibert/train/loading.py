"""A trained model and its tokenizer, from either kind of folder a user has:

- a run folder written by `python -m minibert pretrain --out DIR`: `checkpoint.npz` and `vocab.txt`;
- a HuggingFace `from_pretrained` folder: `config.json`, `model.safetensors` and `vocab.txt` or
  `tokenizer.json` (our `save_pretrained`, or one downloaded from the Hub).

Commands that take `--model DIR` call `load_for_inference(DIR)`, so both kinds work everywhere.
"""

from pathlib import Path

from minibert.errors import CheckpointError
from minibert.io.checkpoint import check_weights_fit_config
from minibert.io.pretrained import CONFIG_FILE, VOCAB_FILE
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import BertTokenizer
from minibert.tokenizer.tokenizer_json import TOKENIZER_JSON_NAME
from minibert.train.checkpointing import CHECKPOINT_FILE, check_vocabulary, load_checkpoint


def load_for_inference(directory):
    """(BertForPreTraining in eval mode, BertTokenizer) from a run folder or a from_pretrained folder."""
    directory = Path(directory)
    if not directory.exists():
        raise CheckpointError(f"model folder {directory} does not exist; give a run folder (made by "
                              "`python -m minibert pretrain --out DIR`) or a from_pretrained folder "
                              f"({CONFIG_FILE}, model.safetensors, {VOCAB_FILE})")
    if not directory.is_dir():
        raise CheckpointError(f"{directory} is a file; give the folder that holds it")
    vocab_path = directory / VOCAB_FILE
    if (directory / CHECKPOINT_FILE).is_file():
        checkpoint = load_checkpoint(directory / CHECKPOINT_FILE)
        config = BertConfig.from_dict(checkpoint.model_config)
        check_weights_fit_config(config, checkpoint.model_state, directory / CHECKPOINT_FILE)
        model = BertForPreTraining(config)
        model.load_state_dict(checkpoint.model_state)
    elif (directory / CONFIG_FILE).is_file():
        model = BertForPreTraining.from_pretrained(directory, verbose=False)
    else:
        raise CheckpointError(f"{directory} holds neither {CHECKPOINT_FILE} (a run folder) nor {CONFIG_FILE} "
                              "(a from_pretrained folder); is it the right folder?")
    if not vocab_path.is_file() and not (directory / TOKENIZER_JSON_NAME).is_file():
        raise CheckpointError(f"{directory} has no {VOCAB_FILE} (nor {TOKENIZER_JSON_NAME}): the model cannot "
                              "read text without the vocabulary it was trained with; copy it into the folder")
    if vocab_path.is_file() and (directory / CHECKPOINT_FILE).is_file():
        check_vocabulary(checkpoint, vocab_path, directory / CHECKPOINT_FILE)
    tokenizer = BertTokenizer.from_pretrained(directory)
    if tokenizer.vocab_size != model.config.vocab_size:
        source = vocab_path if vocab_path.is_file() else directory / TOKENIZER_JSON_NAME
        raise CheckpointError(f"{source} has {tokenizer.vocab_size} tokens but the model's vocab_size is "
                              f"{model.config.vocab_size}; the vocabulary belongs to another model")
    return model.eval(), tokenizer
