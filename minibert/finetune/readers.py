"""Reading the public benchmarks' file formats: GLUE TSV, SQuAD v1.1 JSON, CoNLL token/tag files.

Every example remembers where it came from (`source`: `file:line`, or `file:line:column (json path)`), so
that a problem found later, in the reader or when the example is encoded, can send the user to the very
line. A file that cannot be read as its format says stops with a `DataError` naming file and line; nothing
is skipped silently. The formats are described in the comment below.
"""

# The formats:
#     GLUE TSV    a header, then tab-separated fields. The text columns are found by name: `sentence`
#                 (SST-2, CoLA's test file), `sentence1 sentence2` (RTE, STS-B, MNLI), `question sentence`
#                 (QNLI), `question1 question2` (QQP), `#1 String #2 String` (MRPC), `premise hypothesis`;
#                 the label column is `label`, `Quality`, `gold_label`, `is_duplicate` or `score`.
#                 GLUE's CoLA train and dev files alone have no header: four fields, `source label
#                 mark sentence` (the mark: the source's own `*`, `?` or nothing), recognised by their
#                 first row.
#     SQuAD       {"data": [{"paragraphs": [{"context": ..., "qas": [{"id", "question", "answers":
#                 [{"text", "answer_start"}]}]}]}]}; `answer_start` is a character offset into `context`.
#     CoNLL       one `token ... TAG` per line (first and last field), a blank line after each sentence,
#                 `-DOCSTART-` lines skipped; BIO tags (O, B-TYPE, I-TYPE).

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from minibert.errors import ConfigError, DataError
from minibert.finetune.json_location import JsonSource

TEXT_COLUMNS = (("sentence1", "sentence2"), ("question1", "question2"), ("question", "sentence"),
                ("#1 String", "#2 String"), ("premise", "hypothesis"), ("sentence",), ("text",))
LABEL_COLUMNS = ("label", "Quality", "gold_label", "is_duplicate", "score")
COLA_COLUMNS = ["source", "label", "author's mark", "sentence"]  # GLUE's CoLA train/dev: no header row
BIO_TAG = re.compile(r"^(O|[BI]-\S+)$")


@dataclass
class TextExample:
    """One classification example: a sentence or a sentence pair, and its label (None when unlabelled)."""

    text_a: str
    text_b: str | None
    label: str | float | None
    source: str


@dataclass
class QuestionExample:
    """One SQuAD question about a passage, with its gold answers as (text, character offset) pairs."""

    question_id: str
    question: str
    context: str
    answers: list
    source: object  # a JsonSource: str() gives file:line:column (path)


@dataclass
class TaggedSentence:
    """One CoNLL sentence: its words, their tags (None when untagged), and the line of its first word."""

    words: list
    tags: list | None
    path: str
    first_line: int
    source: str = field(init=False)

    def __post_init__(self):
        self.source = f"{self.path}:{self.first_line}"

    def word_source(self, index):
        """`file:line` of word `index` (a sentence's words are on consecutive lines)."""
        return f"{self.path}:{self.first_line + index}"


# ---- GLUE-style TSV ------------------------------------------------------------------------------------


def read_tsv(path, labelled=True, regression=False):
    """Read a GLUE-style TSV file into TextExamples; labels are strings, or floats with regression=True."""
    lines = _read_lines(path)
    if not lines or not lines[0].strip():
        raise DataError(f"{path}:1: the file is empty or starts with a blank line; a GLUE TSV starts with a "
                        "header such as `sentence<TAB>label`")
    header, first_row = lines[0].split("\t"), 2
    if _is_cola_row(header):
        header, first_row = COLA_COLUMNS, 1
    text_columns = next((names for names in TEXT_COLUMNS if all(name in header for name in names)), None)
    if text_columns is None:
        raise DataError(f"{path}:1: no text column in the header {header}; name it `sentence` (or a pair: "
                        f"{', '.join(' + '.join(names) for names in TEXT_COLUMNS if len(names) == 2)})")
    text_indexes = [header.index(name) for name in text_columns]
    label_index = next((header.index(name) for name in LABEL_COLUMNS if name in header), None)
    if labelled and label_index is None:
        raise DataError(f"{path}:1: no label column in the header {header}; name it `label`")
    examples = []
    for line_number, line in enumerate(lines[first_row - 1:], start=first_row):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            raise DataError(f"{path}:{line_number}: {len(fields)} tab-separated fields, but the header has "
                            f"{len(header)}; is a tab missing, or one inside the text?")
        texts = [fields[index].strip() for index in text_indexes]
        if not all(texts):
            raise DataError(f"{path}:{line_number}: the {' / '.join(text_columns)} text is empty")
        label = None
        if labelled:
            label = fields[label_index].strip()
            if regression:
                label = _number(label, f"{path}:{line_number}")
        examples.append(TextExample(texts[0], texts[1] if len(texts) > 1 else None, label,
                                    f"{path}:{line_number}"))
    if not examples:
        raise DataError(f"{path}: the file has a header but no examples")
    return examples


def _is_cola_row(fields):
    """Whether a first row is a CoLA example rather than a header: 4 fields, a 0/1 label second, and an
    empty mark or one made of BERT-era CoLA's marks (`*`, `?`, `#`) third."""
    return (len(fields) == 4 and fields[1] in ("0", "1") and all(mark in "*?#" for mark in fields[2])
            and bool(fields[3].strip()))


def _number(text, source):
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{source}: the label {text!r} is not a number, and a regression needs one") from None
    if not math.isfinite(value):  # float() accepts "nan" and "inf", which would make the loss nan
        raise DataError(f"{source}: the label {text!r} is not a finite number, and a regression needs one")
    return value


# ---- SQuAD v1.1 JSON -----------------------------------------------------------------------------------


def read_squad(path):
    """Read a SQuAD v1.1 file into QuestionExamples, checking every answer against its passage."""
    text = _read_text(path)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise DataError(f"{path}:{error.lineno}:{error.colno}: not valid JSON ({error.msg})") from None
    except (RecursionError, ValueError) as error:  # nesting too deep; an integer of thousands of digits
        raise DataError(f"{path}: cannot be read as SQuAD JSON ({type(error).__name__}: {error})") from None
    top = JsonSource(path, text)
    articles = _field(document, "data", list, top)
    examples = []
    for article_index, article in enumerate(articles):
        article_source = top / "data" / article_index
        for paragraph_index, paragraph in enumerate(_field(article, "paragraphs", list, article_source)):
            paragraph_source = article_source / "paragraphs" / paragraph_index
            context = _field(paragraph, "context", str, paragraph_source)
            for qa_index, qa in enumerate(_field(paragraph, "qas", list, paragraph_source)):
                source = paragraph_source / "qas" / qa_index
                examples.append(_question(qa, context, source))
    if not examples:
        raise DataError(f"{path}: the file holds no questions")
    return examples


def _question(qa, context, source):
    if not isinstance(qa, dict):
        raise DataError(f"{source}: expected a JSON object for a question, found {type(qa).__name__}")
    if qa.get("is_impossible"):
        raise DataError(f"{source}: an unanswerable question (SQuAD 2.0); this reader takes SQuAD v1.1, "
                        "where every question has an answer in its passage")
    question = _field(qa, "question", str, source)
    if not question.strip():
        raise DataError(f"{source}: the question is empty")
    answers = []
    for answer_index, answer in enumerate(_field(qa, "answers", list, source)):
        answer_source = source / "answers" / answer_index
        answer_text = _field(answer, "text", str, answer_source)
        start = _field(answer, "answer_start", int, answer_source)
        found = context[start:start + len(answer_text)] if 0 <= start <= len(context) else None
        if found != answer_text or not answer_text.strip():
            raise DataError(f"{answer_source}: the answer {answer_text!r} does not match its context at "
                            f"answer_start={start}, which holds {found!r}; answer_start must be the "
                            "character offset of the answer in the context (Python string offsets, from 0)")
        answers.append((answer_text, start))
    return QuestionExample(str(_field(qa, "id", (str, int), source)), question, context, answers, source)


def _field(container, key, kind, source):
    if not isinstance(container, dict):
        raise DataError(f"{source}: expected a JSON object with {key!r}, found {type(container).__name__}")
    if key not in container:
        raise DataError(f"{source}: the object has no {key!r} (it has {sorted(container)[:8]}); is this a "
                        "SQuAD v1.1 file?")
    value = container[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = " or ".join(k.__name__ for k in kind) if isinstance(kind, tuple) else kind.__name__
        raise DataError(f"{source / key}: {key!r} must be a {names}, found {type(value).__name__}")
    return value


# ---- CoNLL ---------------------------------------------------------------------------------------------


def read_conll(path, tagged=True):
    """Read a CoNLL file into TaggedSentences; with tagged=False each line holds a word only."""
    sentences, words, tags, first_line = [], [], [], None
    lines = _read_lines(path)
    for line_number, line in enumerate([*lines, ""], start=1):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if words:
                sentences.append(TaggedSentence(words, tags if tagged else None, str(path), first_line))
            words, tags = [], []
            continue
        if tagged:
            if len(fields) < 2:
                raise DataError(f"{path}:{line_number}: expected `token TAG`, found {line.strip()!r}")
            if not BIO_TAG.match(fields[-1]):
                raise DataError(f"{path}:{line_number}: {fields[-1]!r} is not a BIO tag; tags are O, "
                                "B-TYPE or I-TYPE (B-PER, I-LOC, ...)")
            tags.append(fields[-1])
        if not words:
            first_line = line_number
        words.append(fields[0])
    if not sentences:
        raise DataError(f"{path}: the file holds no sentences")
    return sentences


def tag_set(sentences):
    """The labels of a training set: O, then B- and I- of every entity type seen, sorted by type."""
    kinds = sorted({tag[2:] for sentence in sentences for tag in sentence.tags if tag != "O"})
    return ["O"] + [f"{prefix}-{kind}" for kind in kinds for prefix in ("B", "I")]


# ---- labels --------------------------------------------------------------------------------------------


def label_set(examples):
    """The sorted distinct labels of a training set (SST-2: negative, positive)."""
    return sorted({example.label for example in examples})


def check_labels(examples, labels):
    """Stop at the first example whose label (or, for tagged sentences, tag) is not in `labels`."""
    if labels is None:
        raise ConfigError("the task has no label set yet: call task.fit_labels(train_examples) first")
    known = set(labels)
    for example in examples:
        if isinstance(example, TaggedSentence):
            for index, tag in enumerate(example.tags):
                if tag not in known:
                    raise DataError(f"{example.word_source(index)}: the tag {tag!r} is not in the label "
                                    f"set {labels} of the training data; add examples of it there, or fix "
                                    "the tag")
        elif example.label not in known:
            raise DataError(f"{example.source}: the label {example.label!r} is not in the label set {labels} "
                            "of the training data; fix the label, or add training examples of it")


def _read_lines(path):
    """The file's lines, split at \n only (str.splitlines would also split at U+2028 and others, and the
    line numbers would no longer be an editor's)."""
    lines = _read_text(path).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _read_text(path):
    try:
        return Path(path).read_text(encoding="utf-8-sig")  # -sig: a byte-order mark is not part of the text
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{path} is a folder; give the data file inside it") from None
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start}); convert it to "
                        "UTF-8") from None
