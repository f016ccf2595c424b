"""Which kind of model folder a `--model DIR` is, and the file its tokenizer is read from: one reader for
every command that takes a model (`fill-mask`, `attention`, `embed`, `finetune`).

    a run folder            checkpoint.npz (+ vocab.txt), written by `python -m minibert pretrain --out DIR`
    a from_pretrained folder  config.json + model.safetensors + vocab.txt or tokenizer.json: our
                            `save_pretrained`, the Hub's, or a sentence-transformers folder such as
                            all-MiniLM-L6-v2 (which ships tokenizer.json alone)
"""

from pathlib import Path

from minibert.config import BertConfig
from minibert.errors import CheckpointError
from minibert.io.checkpoint import check_weights_fit_config
from minibert.io.pretrained import CONFIG_FILE, VOCAB_FILE
from minibert.tokenizer.tokenizer_json import TOKENIZER_JSON_NAME
from minibert.train.checkpointing import CHECKPOINT_FILE, check_vocabulary, load_checkpoint

RUN_FOLDER, PRETRAINED_FOLDER = "run folder", "from_pretrained folder"


def model_folder_kind(directory):
    """RUN_FOLDER or PRETRAINED_FOLDER; a missing path, a file or a folder of neither kind is refused by name."""
    directory = Path(directory)
    if not directory.exists():
        raise CheckpointError(f"model folder {directory} does not exist; give a run folder (made by "
                              "`python -m minibert pretrain --out DIR`) or a from_pretrained folder "
                              f"({CONFIG_FILE}, model.safetensors, {VOCAB_FILE} or {TOKENIZER_JSON_NAME})")
    if not directory.is_dir():
        raise CheckpointError(f"{directory} is a file, not a model folder; give the folder that holds it")
    if (directory / CHECKPOINT_FILE).is_file():
        return RUN_FOLDER
    if (directory / CONFIG_FILE).is_file():
        return PRETRAINED_FOLDER
    raise CheckpointError(f"{directory} holds neither {CHECKPOINT_FILE} (a run folder) nor {CONFIG_FILE} "
                          "(a from_pretrained folder); is it the right folder?")


def vocabulary_file(directory):
    """The folder's vocab.txt, else its tokenizer.json (what BertTokenizer.from_pretrained reads)."""
    directory = Path(directory)
    for name in (VOCAB_FILE, TOKENIZER_JSON_NAME):
        if (directory / name).is_file():
            return directory / name
    raise CheckpointError(f"{directory} has neither {VOCAB_FILE} nor {TOKENIZER_JSON_NAME}: the model cannot "
                          "read text without the vocabulary it was trained with; copy one into the folder")


def check_model_folder(directory):
    """(kind, vocabulary file) of a model folder, before anything is built from it or written for it."""
    return model_folder_kind(directory), vocabulary_file(directory)


def read_run_folder(directory):
    """(config, {name: array}) of a run folder's checkpoint; its vocab.txt, if there, must be the one the
    checkpoint was trained with (same sha256), and the weights must fit the config."""
    path = Path(directory) / CHECKPOINT_FILE
    checkpoint = load_checkpoint(path)
    if (Path(directory) / VOCAB_FILE).is_file():
        check_vocabulary(checkpoint, Path(directory) / VOCAB_FILE, path)
    config = BertConfig.from_dict(checkpoint.model_config)
    check_weights_fit_config(config, checkpoint.model_state, path)
    return config, checkpoint.model_state
