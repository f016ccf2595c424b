"""Question answering's windows and answer spans (minibert/finetune/squad_features.py, span_decoding.py) on
the inputs that once went wrong: a window step of 0 that never ended, a training question without an
answer, answers cut mid-word, and a decomposed accent lost at the end of an answer."""

import json
import signal
import unicodedata

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert.cli import main
from minibert.errors import ConfigError, DataError
from minibert.finetune.question_answering import QuestionAnsweringTask
from minibert.finetune.readers import QuestionExample, read_squad
from minibert.finetune.span_decoding import decode_answers
from minibert.finetune.squad_features import question_windows, window_spans, wordpieces_with_offsets
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer


@pytest.fixture
def deadline():
    """Fail (instead of hanging the suite) if the test runs longer than 10 seconds: the bug was a loop
    that never ended."""
    def stop(signum, frame):
        raise TimeoutError("still running after 10 s: the loop does not advance")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("stride", [0, -3, 0.5, True])
def test_a_window_step_below_one_is_refused_at_the_api(deadline, stride):
    """window_spans with doc_stride 0 or -3 looped forever, growing a list of windows by 100 MB/s."""
    with pytest.raises(ConfigError, match=rf"doc_stride={stride!r}.*whole number of tokens >= 1"):
        window_spans(100, 10, stride)
    with pytest.raises(ConfigError, match="doc_stride"):
        QuestionAnsweringTask(BertTokenizer.from_vocab_list(list(SPECIAL_TOKENS)), doc_stride=stride)


@given(st.integers(1, 300), st.integers(1, 50), st.integers(1, 80))
def test_windows_advance_and_cover_the_passage(num_tokens, max_tokens, doc_stride):
    """Window starts strictly increase, every token is in a window, the last window ends the passage, and
    there are never more windows than tokens: the loop provably ends."""
    spans = window_spans(num_tokens, max_tokens, doc_stride)
    starts = [start for start, _ in spans]
    assert starts == sorted(set(starts)) and starts[0] == 0
    assert all(1 <= length <= max_tokens for _, length in spans)
    covered = set()
    for start, length in spans:
        covered.update(range(start, start + length))
    assert covered == set(range(num_tokens))
    assert spans[-1][0] + spans[-1][1] == num_tokens and len(spans) <= num_tokens


@pytest.fixture(scope="module")
def qa_folder(tmp_path_factory):
    """A from_pretrained folder of a 1-layer random BertModel and a SQuAD file of one question."""
    folder = tmp_path_factory.mktemp("qa")
    words = ["tom", "met", "mary", "in", "paris", ".", "who", "did", "?"]
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *words]).save_pretrained(folder / "model")
    BertModel(BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=len(SPECIAL_TOKENS) + len(words))) \
        .save_pretrained(folder / "model")
    return folder


def squad_file(folder, answers):
    question = {"id": "q1", "question": "who did tom meet?", "answers": answers}
    data = {"data": [{"paragraphs": [{"context": "tom met mary in paris.", "qas": [question]}]}]}
    path = folder / f"squad-{len(answers)}.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize("stride", ["0", "-3"])
def test_the_command_refuses_a_window_step_below_one(qa_folder, tmp_path, capsys, deadline, stride):
    """`finetune --task squad --doc-stride 0` hung; now argparse stops it at once, naming the option."""
    path = squad_file(qa_folder, [{"text": "mary", "answer_start": 8}])
    with pytest.raises(SystemExit) as caught:
        main(["finetune", "--task", "squad", "--model", str(qa_folder / "model"), "--out", str(tmp_path / "o"),
              "--train", str(path), "--dev", str(path), "--max-seq-length", "64", "--doc-stride", stride])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert caught.value.code == 2 and error.startswith("error: argument --doc-stride") and ">= 1" in error
    assert not (tmp_path / "o").exists()


def test_a_training_question_without_an_answer_is_named(qa_folder, tmp_path, capsys):
    """`"answers": []` in the training file raised a bare IndexError; now one line names the question."""
    path = squad_file(qa_folder, [])
    [example] = read_squad(path)
    tokenizer = BertTokenizer.from_pretrained(qa_folder / "model")
    with pytest.raises(DataError, match=r"squad-0.json:\d+:\d+ .*qas\[0\]\): a training question needs an answer"):
        question_windows(example, 0, tokenizer, max_seq_length=32)
    assert question_windows(example, 0, tokenizer, max_seq_length=32, with_answer=False)  # predicting: fine
    with pytest.raises(SystemExit) as caught:
        main(["finetune", "--task", "squad", "--model", str(qa_folder / "model"), "--out", str(tmp_path / "o"),
              "--train", str(path), "--dev", str(path), "--max-seq-length", "32"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert caught.value.code == 2 and "needs an answer" in error and "Traceback" not in error


def answer_for(tokenizer, context, first_piece, last_piece):
    """The best answer when the model's scores point at passage pieces first_piece..last_piece."""
    example = QuestionExample("q", "who", context, [], "test")
    [window] = question_windows(example, 0, tokenizer, max_seq_length=64, with_answer=False)
    starts, ends = np.zeros(len(window.input_ids)), np.zeros(len(window.input_ids))
    starts[window.passage_start + first_piece] = 10.0
    ends[window.passage_start + last_piece] = 10.0
    return decode_answers([window], [starts], [ends], context)[0]


def test_answers_are_whole_words_as_in_run_squad():
    """A span from the ## piece of one word to the first piece of another answers the whole words, as
    run_squad.py's token-to-word map does: never "d word word word wor"."""
    tokenizer = BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, "who", "wor", "##d", "a", "."])
    context = "a word word word word."
    pieces, _ = wordpieces_with_offsets(tokenizer, context)
    assert pieces == ["a", "wor", "##d", "wor", "##d", "wor", "##d", "wor", "##d", "."]
    assert answer_for(tokenizer, context, 2, 7).text == "word word word word"
    assert answer_for(tokenizer, context, 4, 5).text == "word word"


def test_a_decomposed_accent_stays_with_its_answer():
    """NFD text ("e" + U+0301): stripping accents normalises the mark to nothing, and the answer lost its
    last accent ("e\u0301te" instead of "e\u0301te\u0301")."""
    tokenizer = BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, "who", "ete", "un", "."])
    context = unicodedata.normalize("NFD", "un été.")
    assert context == "un e\u0301te\u0301."
    pieces, offsets = wordpieces_with_offsets(tokenizer, context)
    assert pieces == ["un", "ete", "."] and offsets[1] == (3, 8)
    found = answer_for(tokenizer, context, 1, 1)
    assert found.text == "e\u0301te\u0301" and found.char_start == 3
