"""Readers of GLUE TSV, SQuAD JSON and CoNLL files (minibert/finetune/readers.py): the good files read
right, and every bad one stops with a message naming the file and the line."""

import json

import pytest

from minibert.errors import DataError
from minibert.finetune.readers import (
    check_labels,
    label_set,
    read_conll,
    read_squad,
    read_tsv,
    tag_set,
)
from minibert.finetune.squad_features import question_windows
from minibert.tokenizer import BertTokenizer


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text, needle):
    """The 1-based line of the first occurrence of `needle` in `text` (computed here, not by the reader)."""
    return text[:text.index(needle)].count("\n") + 1


# ---- TSV -----------------------------------------------------------------------------------------------


def test_tsv_single_sentences_and_pairs(tmp_path):
    """SST-2's `sentence label` and RTE's `index sentence1 sentence2 label` layouts."""
    single = write(tmp_path, "sst.tsv", "sentence\tlabel\n这部电影真好看\tpositive\nawful .\tnegative\n")
    examples = read_tsv(single)
    assert [(e.text_a, e.text_b, e.label) for e in examples] == [("这部电影真好看", None, "positive"),
                                                                ("awful .", None, "negative")]
    assert examples[1].source == f"{single}:3"
    assert label_set(examples) == ["negative", "positive"]
    pairs = write(tmp_path, "rte.tsv",
                  "index\tsentence1\tsentence2\tlabel\n0\tA man.\tA person.\tentailment\n")
    assert [(e.text_a, e.text_b, e.label) for e in read_tsv(pairs)] == [("A man.", "A person.", "entailment")]


def test_tsv_glue_layouts_qqp_and_headerless_cola(tmp_path):
    """QQP's label column is `is_duplicate`; GLUE's CoLA train and dev files have no header row, so their
    first line is an example (and line numbers start at 1)."""
    qqp = write(tmp_path, "qqp.tsv", "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
                                     "7\t15\t16\tHow do I read?\tHow can I read?\t1\n")
    assert [(e.text_a, e.text_b, e.label) for e in read_tsv(qqp)] == [("How do I read?", "How can I read?", "1")]
    text = "gj04\t1\t\tOur friends won't buy this.\ngj04\t0\t*\tOne more pseudo generalization.\n"
    cola = write(tmp_path, "cola.tsv", text)
    examples = read_tsv(cola)
    assert [(e.text_a, e.text_b, e.label) for e in examples] == [("Our friends won't buy this.", None, "1"),
                                                                ("One more pseudo generalization.", None, "0")]
    assert examples[1].source == f"{cola}:{line_of(text, 'One more')}"
    # A header of four names is still a header: its second field is a name, not a 0/1 label.
    headed = write(tmp_path, "headed.tsv", "source\tlabel\tmark\tsentence\ngj04\t1\t\tFine.\n")
    assert [(e.text_a, e.label) for e in read_tsv(headed)] == [("Fine.", "1")]


def test_tsv_regression_labels_are_numbers(tmp_path):
    """STS-B's score column read as floats; a non-number names its line."""
    path = write(tmp_path, "sts.tsv", "sentence1\tsentence2\tscore\na\tb\t3.8\nc\td\thigh\n")
    with pytest.raises(DataError, match=rf"{path}:3: .*'high' is not a number"):
        read_tsv(path, regression=True)


def test_tsv_wrong_field_count_names_the_line(tmp_path):
    """A row with a missing tab is malformed: file:line in the message."""
    path = write(tmp_path, "bad.tsv", "sentence\tlabel\ngood\tpositive\nno tab here\n")
    with pytest.raises(DataError, match=rf"{path}:3: 1 tab-separated fields, but the header has 2"):
        read_tsv(path)


def test_tsv_header_without_text_or_label_column(tmp_path):
    """A header naming no known text column, or no label column, is refused at line 1."""
    with pytest.raises(DataError, match=r":1: no text column"):
        read_tsv(write(tmp_path, "a.tsv", "words\tlabel\nx\ty\n"))
    with pytest.raises(DataError, match=r":1: no label column"):
        read_tsv(write(tmp_path, "b.tsv", "sentence\tclass\nx\ty\n"))


def test_label_not_in_the_label_set_names_file_and_line(tmp_path):
    """A dev label the training set never had is an error at its line."""
    train = read_tsv(write(tmp_path, "train.tsv", "sentence\tlabel\na\tpositive\nb\tnegative\n"))
    dev_path = write(tmp_path, "dev.tsv", "sentence\tlabel\nc\tpositive\nd\tneutral\n")
    with pytest.raises(DataError, match=rf"{dev_path}:3: the label 'neutral' is not in the label set"):
        check_labels(read_tsv(dev_path), label_set(train))


def test_not_utf8_and_missing_file(tmp_path):
    """Bytes that are not UTF-8, and a path that does not exist, are DataErrors naming the file."""
    path = tmp_path / "latin1.tsv"
    path.write_bytes("sentence\tlabel\ncafé\tpositive\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8"):
        read_tsv(path)
    with pytest.raises(DataError, match="no such file"):
        read_tsv(tmp_path / "missing.tsv")


# ---- SQuAD ---------------------------------------------------------------------------------------------


def squad(context, answers, question="Who?"):
    return {"version": "1.1", "data": [{"title": "t", "paragraphs": [
        {"context": context, "qas": [{"id": "q1", "question": question, "answers": answers}]}]}]}


def test_squad_reads_questions_with_their_answers(tmp_path):
    """Each question carries its passage and every gold answer with its character offset."""
    answers = [{"text": "Mary", "answer_start": 8}, {"text": "Mary.", "answer_start": 8}]
    [example] = read_squad(write(tmp_path, "ok.json", json.dumps(squad("Tom met Mary.", answers))))
    assert (example.question_id, example.question) == ("q1", "Who?")
    assert example.answers == [("Mary", 8), ("Mary.", 8)]


def test_squad_answer_not_matching_context_names_line_and_path(tmp_path):
    """answer_start pointing elsewhere: the message names file, line and the JSON path, and what is there."""
    text = json.dumps(squad("Tom met Mary.", [{"text": "Mary", "answer_start": 4}]), indent=2)
    path = write(tmp_path, "bad.json", text)
    line = line_of(text, '"text": "Mary"') - 1  # the answer object opens on the line before its first key
    with pytest.raises(DataError) as error:
        read_squad(path)
    message = str(error.value)
    assert f"{path}:{line}:" in message
    assert "data[0].paragraphs[0].qas[0].answers[0]" in message and "'met '" in message


def test_squad_malformed_json_names_line_and_column(tmp_path):
    """A syntax error is reported where the decoder found it."""
    path = write(tmp_path, "broken.json", '{"data": [\n  {"paragraphs": [}\n]}')
    with pytest.raises(DataError, match=rf"{path}:2:\d+: not valid JSON"):
        read_squad(path)


def test_squad_missing_field_and_wrong_type(tmp_path):
    """A missing 'context' and a string answer_start are named with their place."""
    no_context = {"data": [{"paragraphs": [{"qas": []}]}]}
    with pytest.raises(DataError, match=r"data\[0\]\.paragraphs\[0\]\): the object has no 'context'"):
        read_squad(write(tmp_path, "a.json", json.dumps(no_context)))
    wrong = squad("Tom met Mary.", [{"text": "Mary", "answer_start": "8"}])
    with pytest.raises(DataError, match=r"answers\[0\]\.answer_start\): 'answer_start' must be a int"):
        read_squad(write(tmp_path, "b.json", json.dumps(wrong)))


def test_squad_question_too_long_for_max_seq_length(tmp_path):
    """A question that leaves no room for the passage is an error naming the question's line."""
    text = json.dumps(squad("Tom met Mary.", [{"text": "Mary", "answer_start": 8}],
                            question="who did tom meet on the long day"), indent=1)
    path = write(tmp_path, "long.json", text)
    [example] = read_squad(path)
    tokenizer = BertTokenizer.from_vocab_list(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "who", "did",
                                               "tom", "meet", "on", "the", "long", "day", "met", "mary", "."])
    question_windows(example, 0, tokenizer, max_seq_length=16)  # 8 question tokens + 3 fit in 16
    line = line_of(text, '"id": "q1"') - 1  # the question object opens on the line before its first key
    with pytest.raises(DataError, match=rf"{path}:{line}:\d+ .*leaves no room for the passage"):
        question_windows(example, 0, tokenizer, max_seq_length=11)


# ---- CoNLL ---------------------------------------------------------------------------------------------


def test_conll_sentences_tags_and_docstart(tmp_path):
    """Blank lines end sentences, -DOCSTART- is skipped, the last field is the tag (CoNLL-2003 has 4)."""
    path = write(tmp_path, "ner.conll",
                 "-DOCSTART- -X- -X- O\n\nLeo NNP B-NP B-PER\nruns VBZ B-VP O\n\n小 B-PER\n明 I-PER\n")
    sentences = read_conll(path)
    assert [(s.words, s.tags) for s in sentences] == [(["Leo", "runs"], ["B-PER", "O"]),
                                                      (["小", "明"], ["B-PER", "I-PER"])]
    assert sentences[1].source == f"{path}:6"
    assert tag_set(sentences) == ["O", "B-PER", "I-PER"]


def test_conll_malformed_lines_name_the_line(tmp_path):
    """A line with no tag, and a tag that is not BIO, stop the reader at that line."""
    with pytest.raises(DataError, match=r"no_tag.conll:3: expected `token TAG`"):
        read_conll(write(tmp_path, "no_tag.conll", "Leo B-PER\n\nruns\n"))
    with pytest.raises(DataError, match=r"bad_tag.conll:2: 'X-PER' is not a BIO tag"):
        read_conll(write(tmp_path, "bad_tag.conll", "Leo B-PER\nBrown X-PER\n"))


def test_conll_tag_not_in_the_training_tags_names_the_line(tmp_path):
    """A dev tag of an entity type the training set never had is named with its own line."""
    labels = tag_set(read_conll(write(tmp_path, "train.conll", "Leo B-PER\n")))
    dev_path = write(tmp_path, "dev.conll", "Leo B-PER\n\nat O\nLondon B-LOC\n")
    with pytest.raises(DataError, match=rf"{dev_path}:4: the tag 'B-LOC' is not in the label set"):
        check_labels(read_conll(dev_path), labels)
