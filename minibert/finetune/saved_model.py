"""A fine-tuned model's folder: what `finetune --out DIR` writes and `predict --model DIR` reads.

    DIR/config.json, DIR/model.safetensors, DIR/vocab.txt (+ tokenizer_config.json): a HuggingFace folder,
        so `BertForSequenceClassification.from_pretrained(DIR)` works in transformers as it does here
    DIR/finetune.json   the task, its settings, the training settings, the dev metrics of every epoch,
                        and the sha256 of vocab.txt (checked on loading)
    DIR/log.jsonl       one line per progress report and per evaluation
"""

# In detail:
#     DIR/config.json            the model config, with the label names (HF's id2label, label2id)
#     DIR/model.safetensors      encoder and head, under HuggingFace's names
#     DIR/vocab.txt              the tokenizer's vocabulary, and tokenizer_config.json its settings
#     DIR/finetune.json          the task, its settings (max_seq_length, ...), the training settings, the
#                                dev metrics of every epoch, and the sha256 of vocab.txt (checked on loading:
#                                a reordered vocabulary would give wrong answers without an error)
#     DIR/log.jsonl              one line per progress report and per evaluation
# The first three make DIR a HuggingFace folder.

import json
from pathlib import Path

from minibert.errors import CheckpointError
from minibert.finetune.tasks import TASK_KINDS
from minibert.io import atomic_write
from minibert.io.pretrained import VOCAB_FILE
from minibert.surrogates import record_json
from minibert.tokenizer import BertTokenizer
from minibert.tokenizer.vocab import vocab_fingerprint

RECORD_FILE = "finetune.json"


def save_finetuned(out_dir, model, task, record):
    """Write the model, its tokenizer and `record` (a JSON-able dict, see loop.py) into `out_dir`."""
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    task.tokenizer.save_pretrained(out_dir)
    write_record(out_dir, task, record)


def write_record(out_dir, task, record):
    """Write finetune.json: `record` plus what rebuilds the task (its kind and settings)."""
    record = {**record, "kind": task.kind, "task_settings": task.state()}
    vocab_path = Path(out_dir) / VOCAB_FILE
    if vocab_path.is_file():
        record["vocab_sha256"] = vocab_fingerprint(vocab_path)
    with atomic_write(Path(out_dir) / RECORD_FILE) as file:
        file.write((record_json(record, indent=2) + "\n").encode("utf-8"))


def read_record(model_dir):
    path = Path(model_dir) / RECORD_FILE
    if not Path(model_dir).is_dir():
        raise CheckpointError(f"model folder {model_dir} does not exist; give the --out folder of "
                              "`python -m minibert finetune`")
    if not path.is_file():
        raise CheckpointError(f"{model_dir} has no {RECORD_FILE}: it is not a model written by "
                              "`python -m minibert finetune --out DIR`; fine-tune one first")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{path} is damaged ({error}); fine-tune the model again") from None


def load_finetuned(model_dir, verbose=False):
    """(task, model) of a fine-tuned folder; the model in eval mode, ready to predict."""
    record = read_record(model_dir)
    if record.get("kind") not in TASK_KINDS:
        raise CheckpointError(f"{model_dir}/{RECORD_FILE} names an unknown task kind {record.get('kind')!r}")
    vocab_path = Path(model_dir) / VOCAB_FILE
    if "vocab_sha256" in record and vocab_path.is_file() and vocab_fingerprint(vocab_path) != record["vocab_sha256"]:
        raise CheckpointError(f"{vocab_path} is not the vocabulary this model was fine-tuned with (its sha256 "
                              f"differs from {RECORD_FILE}'s: tokens reordered, added or edited); put the model's "
                              "vocab.txt back, or fine-tune again")
    tokenizer = BertTokenizer.from_pretrained(model_dir)
    task = TASK_KINDS[record["kind"]](tokenizer, **record["task_settings"])
    model = task.head.from_pretrained(model_dir, **task.head_options(), verbose=verbose)
    return task, model.eval()
