"""The fine-tuning readers (GLUE TSV, SQuAD JSON, CoNLL) on hostile files: whatever the bytes, a reader
returns examples or raises a DataError naming the file, never another exception. And a fine-tuning run
that diverges names its step and the parameter.

test_readers.py checks the messages for the common mistakes, line by line; here are the files no one
writes on purpose (binary data, folders, JSON nested 100,000 deep, 5,000-digit numbers) and a byte fuzzer,
which runs MINIBERT_FUZZ_EXAMPLES cases per reader (default 150; 10000 for a long run).
"""

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.errors import DataError
from minibert.finetune import FineTuneConfig
from minibert.finetune.finetuning_run import run_finetuning
from minibert.finetune.readers import read_conll, read_squad, read_tsv
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer
from minibert.train.pretraining_loop import TrainingDiverged

CONTEXT = "Alice works at Acme in Paris."
SQUAD = {"data": [{"title": "t", "paragraphs": [{"context": CONTEXT, "qas": [
    {"id": "q1", "question": "Where does Alice work?", "answers": [{"text": "Acme", "answer_start": 15}]},
    {"id": "q2", "question": "Which city?", "answers": [{"text": "Paris", "answer_start": 23}]}]}]}]}
VALID = {
    "tsv": (read_tsv, b"sentence\tlabel\nthe film was great\tpositive\nit was dull\tnegative\n"),
    "squad": (read_squad, json.dumps(SQUAD, indent=1).encode()),
    "conll": (read_conll, b"-DOCSTART- O\n\nAlice B-PER\nworks O\nat O\nAcme B-ORG\n\nParis B-LOC\n"),
}


def read(tmp_path, kind, content, **options):
    reader, _ = VALID[kind]
    path = tmp_path / f"file.{kind}"
    path.write_bytes(content)
    return reader(path, **options)


@pytest.mark.parametrize("kind", VALID)
def test_the_valid_files_read(tmp_path, kind):
    """The files the fuzzer starts from are valid: two examples each."""
    assert len(read(tmp_path, kind, VALID[kind][1])) == 2


@pytest.mark.parametrize("kind", VALID)
@pytest.mark.parametrize("content", [b"", bytes(range(256)) * 16, b"\x00" * 1000, "\u2028\u0085".encode()],
                         ids=["empty", "binary", "NUL bytes", "unicode line separators"])
def test_garbage_is_a_data_error(tmp_path, kind, content):
    """Empty, binary, NUL-filled and odd-separator files: a DataError naming the file, for each reader."""
    with pytest.raises(DataError, match="file."):
        read(tmp_path, kind, content)


@pytest.mark.parametrize("kind", VALID)
def test_a_folder_is_named(tmp_path, kind):
    """A folder instead of a file: a DataError saying so (not a bare IsADirectoryError)."""
    with pytest.raises(DataError, match="is a folder"):
        VALID[kind][0](tmp_path)


@pytest.mark.parametrize("text, named", [
    ("[" * 100_000 + "]" * 100_000, "RecursionError"),
    ('{"data": [{"paragraphs": [{"context": "x", "qas": [{"answer_start": 1' + "0" * 5000 + "}]}]}]}",
     "cannot be read as SQuAD JSON"),
    ('{"data": [{"paragraphs": [{"context": "x", "qas": [7]}]}]}', r"qas\[0\]\): expected a JSON object"),
    ('{"data": [{"paragraphs": [{"context": "x", "qas": [{"id": 1, "question": "q", "answers": '
     '[{"text": "x", "answer_start": NaN}]}]}]}]}', "answer_start' must be a int"),
    ('{"data": [{"paragraphs": [{"context": "x", "qas": [{"id": 1, "question": "q", "is_impossible": true, '
     '"answers": []}]}]}]}', "SQuAD 2.0"),
], ids=["nesting", "5000-digit number", "question not an object", "NaN offset", "SQuAD 2.0"])
def test_hostile_squad_json_is_named(tmp_path, text, named):
    """JSON nested too deep for the parser, numbers too long to convert, questions that are not objects,
    NaN offsets and unanswerable questions: DataErrors naming the problem (and the place, where known)."""
    with pytest.raises(DataError, match=named):
        read(tmp_path, "squad", text.encode())


@pytest.mark.parametrize("label", ["nan", "inf", "-Infinity"])
def test_regression_labels_must_be_finite(tmp_path, label):
    """float() reads 'nan' and 'inf'; a regression target of either makes the loss nan: refused by line."""
    with pytest.raises(DataError, match=rf":3: the label '{label}' is not a finite number"):
        read(tmp_path, "tsv", f"sentence\tlabel\nfine\t0.5\nodd\t{label}\n".encode(), regression=True)


@st.composite
def mutated(draw, original):
    """A valid file with a few bytes flipped, deleted or inserted, or cut short."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, max(len(data) - 1, 0)))
        action = draw(st.sampled_from(["flip", "delete", "insert", "truncate"]))
        if action == "flip" and data:
            data[position] ^= draw(st.integers(1, 255))
        elif action == "delete" and data:
            del data[position]
        elif action == "insert":
            data.insert(position, draw(st.sampled_from(b'\t\n\r"{}[]:,\\ 0\x00\xff')))
        else:
            del data[position:]
    return bytes(data)


@pytest.mark.parametrize("kind", VALID)
@settings(max_examples=int(os.environ.get("MINIBERT_FUZZ_EXAMPLES", "150")))
@given(data=st.data())
def test_fuzz_mutated_files_are_read_or_refused(tmp_path_factory, kind, data):
    """Byte mutations and truncations of a valid file: the reader returns examples or raises DataError;
    no other exception escapes."""
    content = data.draw(mutated(VALID[kind][1]))
    try:
        examples = read(tmp_path_factory.mktemp("fuzz"), kind, content)
    except DataError:
        return
    assert examples


def test_a_diverging_fine_tuning_run_names_step_and_parameter(tmp_path):
    """Fine-tuning from weights holding a NaN (one matrix of encoder layer 1) stops at step 1 with a
    TrainingDiverged naming the step, the epoch and that parameter, before any weight changes."""
    words = ["good", "bad", "film", "very"]
    folder = tmp_path / "model"
    model = BertModel(BertConfig.preset("tiny", num_hidden_layers=2, vocab_size=len(SPECIAL_TOKENS) + 4))
    model.state_dict()["encoder.layer.1.output.dense.weight"][3, 5] = np.nan
    model.save_pretrained(folder)
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *words]).save_pretrained(folder)
    data = tmp_path / "train.tsv"
    data.write_text("sentence\tlabel\nvery good film\tpositive\nbad film\tnegative\n")
    with pytest.raises(TrainingDiverged, match=r"step 1 \(epoch 1\): the fine-tuning loss is nan; the first "
                                               r"non-finite weight is that of \S*encoder.layer.1.output.dense"):
        run_finetuning("glue-tsv", folder, tmp_path / "out", data, data,
                       FineTuneConfig(learning_rate=1e-3, epochs=1, batch_size=2), log=None)
