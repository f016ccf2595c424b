"""Tests for minibert.data.corpora: the corpus format, the pydocs cleaner, the synthetic grammar."""

import json
import math
import random
import re
import types
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert.data.corpora import (
    SYNTHETIC_RIGHT_CONTEXT,
    build_corpus,
    build_pydocs,
    build_synthetic,
    check_corpus_file,
    iter_documents,
    split_sentences,
)
from minibert.data.corpora.docstring_text import docstring_sentences, unwrap_inline_markup
from minibert.data.corpora.pydocs import module_documents
from minibert.data.corpora.synthetic import corpus_documents, synthetic_story
from minibert.data.corpora.synthetic_grammar import Word, render, right_context_sentence
from minibert.errors import DataError
from minibert.finetune.readers import read_conll, read_squad, read_tsv
from minibert.tokenizer import BasicTokenizer, BertTokenizer, train_wordpiece

SMALL_TASKS = {"sentiment": (60, 20), "qa": (10, 5), "ner": (40, 10)}


def quiet(_message):
    pass


@pytest.fixture(scope="module")
def synthetic_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("synthetic")
    build_synthetic(out, seed=3, num_documents=60, progress=quiet, probe_per_word=3, task_sizes=SMALL_TASKS)
    return out


def read_probe(directory):
    return [json.loads(line) for line in (directory / "probe.jsonl").read_text(encoding="utf-8").splitlines()]


def read_documents(path):
    """Documents of a corpus file, read with nothing but str.split, independent of iter_documents."""
    text = path.read_text(encoding="utf-8")
    return [block.split("\n") for block in text.rstrip("\n").split("\n\n")]


# ---------------------------------------------------------------- sentence splitting


@pytest.mark.parametrize("text, expected", [
    ("Use numpy.sum here. It is fast.", ["Use numpy.sum here.", "It is fast."]),
    ("The value is 1.5 by default. Change it.", ["The value is 1.5 by default.", "Change it."]),
    ("Pass a list, e.g. Python lists. Then call it.", ["Pass a list, e.g. Python lists.", "Then call it."]),
    ("That is, i.e. The Thing. Next one.", ["That is, i.e. The Thing.", "Next one."]),
    ("Written by J. Smith in 1999. Read it!", ["Written by J. Smith in 1999.", "Read it!"]),
    ("Apples, pears, etc. The rest is fruit.", ["Apples, pears, etc.", "The rest is fruit."]),
    ("It returns None (see below.) Then it stops?", ["It returns None (see below.)", "Then it stops?"]),
    ("Mr. Brown met Dr. Who. They talked.", ["Mr. Brown met Dr. Who.", "They talked."]),
    ("这部电影真好看。我很喜欢！你呢？", ["这部电影真好看。", "我很喜欢！", "你呢？"]),
    ("wrapped\nover   lines. And more.", ["wrapped over lines.", "And more."]),
])
def test_split_sentences_tricky_cases(text, expected):
    """Periods in numbers, dotted names, abbreviations and initials do not end a sentence; etc. does."""
    assert split_sentences(text) == expected


@given(st.lists(st.sampled_from(["alpha", "beta", "e.g.", "1.5", "os.path", "Gamma.", "Delta!", "x?"]),
                min_size=1, max_size=20))
def test_split_sentences_keeps_every_word(words):
    """Splitting only cuts at spaces: the words of the sentences, joined, are the words of the paragraph."""
    paragraph = " ".join(words)
    assert " ".join(split_sentences(paragraph)).split() == paragraph.split()


# ---------------------------------------------------------------- docstring cleaning

NUMPYDOC = '''Sum the elements, e.g. of a list.

Parameters
----------
a : array_like
    Elements to sum. They may be nested.
axis : int, optional
    The axis along which to sum.

Returns
-------
out : ndarray
    The sum of ``a`` along :func:`~numpy.add` axes.

Examples
--------
This text is in the examples and is dropped.

>>> np.sum([1, 2])
3

Notes
-----
=====  ==========
dtype  meaning
=====  ==========
int8   small integer
=====  ==========

.. versionadded:: 1.7.0
   The keyword argument was added.

.. code-block:: python

   total = add(a, b)

Use it like this::

    x = np.sum(a) + 1

See https://numpy.org for more.
'''


def test_docstring_sentences_numpydoc():
    """Doctests, the Examples section, tables, code blocks and signatures go; parameter prose stays."""
    assert docstring_sentences(NUMPYDOC) == [
        "Sum the elements, e.g. of a list.",
        "Elements to sum.",
        "They may be nested.",
        "The axis along which to sum.",
        "The sum of a along add axes.",
        "The keyword argument was added.",
        "Use it like this:",
        "See https://numpy.org for more.",
    ]


def test_docstring_sentences_drop_doctest_output_and_fields():
    """A doctest's output lines go with it; :param: fields keep their text; signature lines go."""
    doc = ("add(x1, x2, /, out=None)\n\nAdd two numbers together.\n\n>>> add(1, 2)\n3\n>>> add(\n... 1, 2)\n"
           "4 is not the answer here.\n\n:param x1: The first number to add.\n:returns: The sum of both.\n")
    assert docstring_sentences(doc) == ["Add two numbers together.", "The first number to add.",
                                        "The sum of both."]


def test_docstring_sentences_drop_grid_tables_and_code_lines():
    """A grid table is dropped whole, and stray lines of code are not prose; the sentence before stays."""
    doc = ("Operators in a table.\n\n+------+------+\n| Op   | Name |\n+======+======+\n| + is | add. |\n"
           "+------+------+\n\nfor i in range(10):\n\n# a comment that ends with a period.\n")
    assert docstring_sentences(doc) == ["Operators in a table."]


def test_unwrap_inline_markup():
    """Roles, literals, emphasis, links and footnotes become plain text; *args survives."""
    text = ":class:`~numpy.ndarray` and :func:`len` with ``x`` *a* **b** `site <http://a.b>`_ [1]_ *args"
    assert unwrap_inline_markup(text) == "ndarray and len with x a b site *args"


def test_build_pydocs_restricted(tmp_path):
    """A build over two small modules writes documents of at least two sentences, and records versions."""
    path = build_pydocs(tmp_path, progress=quiet, modules=["json", "textwrap"], include_topics=False)
    documents = read_documents(path)
    assert len(documents) >= 2 and all(len(document) >= 2 for document in documents)
    text = path.read_text(encoding="utf-8")
    assert ">>>" not in text and "Serialize obj to a JSON formatted str." in text
    versions = json.loads((tmp_path / "versions.json").read_text())
    assert versions["documents"] == len(documents) and versions["python"]
    assert set(versions["packages"]) >= {"numpy", "numba", "regex"}


def test_build_pydocs_is_deterministic(tmp_path):
    """Two builds in one process give the same bytes."""
    first = build_pydocs(tmp_path / "a", progress=quiet, modules=["json", "json.*"], include_topics=False)
    second = build_pydocs(tmp_path / "b", progress=quiet, modules=["json", "json.*"], include_topics=False)
    assert first.read_bytes() == second.read_bytes()


def test_objects_of_skipped_packages_are_left_out_where_re_exported():
    """pandas.errors re-exports the InvalidVersion of pandas.util.version, a copy of the `packaging` library
    that the package-topics task asks about: no corpus may hold its docstring, wherever it is exposed."""

    class InvalidVersion(ValueError):
        """An invalid version was found, users should refer to PEP 440. It is copied from packaging."""

    class Kept:
        """A class defined in the module is kept. Its docstring has two sentences."""

    InvalidVersion.__module__, Kept.__module__ = "pandas.util.version", "fake_api"
    api = types.ModuleType("fake_api", "The fake module re-exports two classes. It has two sentences.")
    api.InvalidVersion, api.Kept = InvalidVersion, Kept
    sentences = [sentence for _, document in module_documents({"fake_api": api}) for sentence in document]
    assert "A class defined in the module is kept." in sentences
    assert not any("PEP 440" in sentence for sentence in sentences)


# ---------------------------------------------------------------- corpus format and user files


def test_synthetic_is_deterministic(tmp_path, synthetic_dir):
    """The same seed gives the same bytes in every file; another seed gives another corpus."""
    again = tmp_path / "again"
    build_synthetic(again, seed=3, num_documents=60, progress=quiet, probe_per_word=3, task_sizes=SMALL_TASKS)
    for path in synthetic_dir.iterdir():
        assert (again / path.name).read_bytes() == path.read_bytes(), path.name
    other = tmp_path / "other"
    build_synthetic(other, seed=4, num_documents=60, progress=quiet, probe_per_word=3, task_sizes=SMALL_TASKS)
    assert (other / "corpus.txt").read_bytes() != (synthetic_dir / "corpus.txt").read_bytes()


def test_synthetic_document_structure(synthetic_dir):
    """Blank lines separate non-empty documents of several sentences; versions.json counts them right."""
    path = synthetic_dir / "corpus.txt"
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n") and "\n\n\n" not in text
    documents = read_documents(path)
    assert len(documents) == 60
    assert all(len(document) >= 5 and all(line.strip() for line in document) for document in documents)
    assert [sentences for _, sentences in iter_documents(path)] == documents
    versions = json.loads((synthetic_dir / "versions.json").read_text())
    assert versions["documents"] == 60 and versions["sentences"] == sum(map(len, documents))


def test_synthetic_chinese_has_word_boundaries(synthetic_dir):
    """Chinese sentences separate every word (punctuation too) by single spaces."""
    chinese = [line for document in read_documents(synthetic_dir / "corpus.txt") for line in document
               if "。" in line]
    assert chinese and all(line.endswith(" 。") and "  " not in line for line in chinese)


def test_check_corpus_file_errors_and_warnings(tmp_path):
    """Empty files and files without a document break are errors; one-sentence documents warn with a line."""
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="empty"):
        check_corpus_file(empty)
    single = tmp_path / "single.txt"
    single.write_text("One sentence.\nTwo sentences.\n", encoding="utf-8")
    with pytest.raises(DataError, match="no document breaks"):
        check_corpus_file(single)
    lonely = tmp_path / "lonely.txt"
    lonely.write_text("A first.\nA second.\n\nAlone here.\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"lonely.txt:4:"):
        counts = check_corpus_file(lonely)
    assert counts == {"documents": 2, "sentences": 3, "single_sentence_documents": 1}
    with pytest.raises(DataError, match="not UTF-8"):
        bad = tmp_path / "bad.txt"
        bad.write_bytes(b"fine\n\xff\xfe broken\n")
        check_corpus_file(bad)


def test_build_corpus_user_files(tmp_path):
    """A corpus-format file is used in place; plain prose and WikiText are converted into documents."""
    corpus = tmp_path / "notes.txt"
    corpus.write_text("A first.\nA second.\n\nB first.\nB second.\n", encoding="utf-8")
    assert build_corpus(str(corpus), tmp_path / "out", progress=quiet) == corpus
    assert json.loads((tmp_path / "out" / "versions.json").read_text())["documents"] == 2
    wiki = tmp_path / "wiki.raw"
    wiki.write_text(" = Alpha = \n\n Alpha is a letter. It comes first.\n\n = = History = = \n\n"
                    " It is old. Very old.\n\n = Beta = \n\n Beta is second. It follows alpha.\n",
                    encoding="utf-8")
    converted = build_corpus(str(wiki), tmp_path / "wiki", split_sentences=True, progress=quiet)
    assert read_documents(converted) == [["Alpha is a letter.", "It comes first.", "It is old.", "Very old."],
                                         ["Beta is second.", "It follows alpha."]]
    with pytest.raises(DataError, match="neither a corpus name"):
        build_corpus(str(tmp_path / "missing.txt"), tmp_path / "x", progress=quiet)


# ---------------------------------------------------------------- the right-context property


def test_right_context_nouns_select_exactly_one_word():
    """In every family, each noun belongs to exactly one blank word, so the right context decides it."""
    for family in SYNTHETIC_RIGHT_CONTEXT.values():
        nouns = [noun for word in family.choices for noun in family.nouns[word]]
        assert len(nouns) == len(set(nouns)), family.name
        assert all(family.word_for_noun(noun) in family.choices for noun in nouns)


def test_probe_items_are_determined_by_right_context(synthetic_dir):
    """Each probe span is its word, among its choices, and the word after it selects exactly that word."""
    items = read_probe(synthetic_dir)
    per_word = Counter((item["family"], item["word"]) for item in items)
    assert set(per_word.values()) == {3}
    assert len(per_word) == sum(len(family.choices) for family in SYNTHETIC_RIGHT_CONTEXT.values())
    for item in items:
        family = SYNTHETIC_RIGHT_CONTEXT[item["family"]]
        assert item["text"][item["char_start"]:item["char_end"]] == item["word"]
        assert item["choices"] == list(family.choices) and item["language"] == family.language
        right = item["text"][item["char_end"]:].split()
        noun = right[1] if right[0] in ("of", "the") else right[0]  # "a cup of tea", "drive the car"
        assert family.word_for_noun(noun.rstrip(".")) == item["word"]


def test_probe_documents_are_held_out(synthetic_dir):
    """Probe texts come from held-out stories: most of them (two sentences each) never occur in the corpus.

    A small grammar can repeat a pair of short sentences by chance, so the bound is "fewer than a quarter".
    """
    corpus = (synthetic_dir / "corpus.txt").read_text(encoding="utf-8").replace("\n", " ")
    items = read_probe(synthetic_dir)
    assert sum(item["text"] in corpus for item in items) < len(items) // 4


def chi_square_critical(dof, z=3.09):
    """Upper critical value of chi-square at p = 0.001 (z = 3.09), Wilson-Hilferty approximation."""
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


@pytest.mark.parametrize("family_name", sorted(SYNTHETIC_RIGHT_CONTEXT))
def test_left_context_carries_no_information(family_name):
    """The text left of the blank has the same distribution whatever the blank word (chi-square, p=0.001).

    We draw 4,000 sentences for a fixed cast, tabulate left context against blank word, and test
    homogeneity. A grammar that let the left context depend on the word (say, 喝 only after 每天) fails.
    """
    family = SYNTHETIC_RIGHT_CONTEXT[family_name]
    rng = random.Random(f"left-context-{family_name}")
    a, b, day = Word("A", "PER"), Word("B", "PER"), Word("D")
    table = Counter()
    for _ in range(4000):
        words = right_context_sentence(rng, family, a, b, day)
        blank = next(i for i, word in enumerate(words) if word.family)
        table[" ".join(word.text for word in words[:blank]), words[blank].text] += 1
    contexts = sorted({context for context, _ in table})
    rows = {context: sum(table[context, word] for word in family.choices) for context in contexts}
    columns = {word: sum(table[context, word] for context in contexts) for word in family.choices}
    total = sum(rows.values())
    expected = {(context, word): rows[context] * columns[word] / total
                for context in contexts for word in family.choices}
    statistic = sum((table[cell] - value) ** 2 / value for cell, value in expected.items())
    dof = (len(contexts) - 1) * (len(family.choices) - 1)
    assert statistic < chi_square_critical(dof)
    # and the words themselves are uniform: chance for a left-to-right model is 1/len(choices)
    mean = total / len(family.choices)
    uniformity = sum((count - mean) ** 2 / mean for count in columns.values())
    assert uniformity < chi_square_critical(len(family.choices) - 1)


def test_corpus_blanks_follow_the_noun_rule(synthetic_dir):
    """Everywhere in the corpus, a measure word of a family is the one its following noun selects."""
    measure = SYNTHETIC_RIGHT_CONTEXT["zh_measure_word"]
    checked = 0
    for document in read_documents(synthetic_dir / "corpus.txt"):
        for line in document:
            words = line.split()
            for word, noun in zip(words, words[1:], strict=False):
                if word in measure.choices and noun in sum(measure.nouns.values(), ()):
                    assert measure.word_for_noun(noun) == word, line
                    checked += 1
    assert checked > 20


def test_render_offsets():
    """render's spans index the words in the text, in both the spaced and the natural form."""
    sentence = [Word("小明"), Word("喝"), Word("茶"), Word("。")]
    text, spans = render([sentence, sentence], "zh")
    assert text == "小明 喝 茶 。 小明 喝 茶 。" and text[slice(*spans[1][1])] == "喝"
    text, spans = render([[Word("Tom"), Word("left"), Word(".")]], "en", spaced=False)
    assert text == "Tom left." and text[slice(*spans[0][2])] == "."


# ---------------------------------------------------------------- fine-tuning sets


def test_sentiment_files(synthetic_dir):
    """SST-2 layout: a header, then sentence<TAB>label with both labels and both languages present."""
    lines = (synthetic_dir / "sentiment_train.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "sentence\tlabel" and len(lines) == 61
    rows = [line.split("\t") for line in lines[1:]]
    assert all(len(row) == 2 and row[1] in ("positive", "negative") for row in rows)
    assert {label for _, label in rows} == {"positive", "negative"}
    assert any("不" in sentence for sentence, _ in rows) and any(sentence.isascii() for sentence, _ in rows)
    dev = {line.split("\t")[0] for line in (synthetic_dir / "sentiment_dev.tsv").read_text().splitlines()[1:]}
    assert not dev & {sentence for sentence, _ in rows}


@pytest.mark.parametrize("split", ["train", "dev"])
def test_qa_answers_match_context(synthetic_dir, split):
    """SQuAD v1.1: every answer_start points at exactly the answer text, and question ids are unique."""
    data = json.loads((synthetic_dir / f"qa_{split}.json").read_text(encoding="utf-8"))
    assert data["version"] == "1.1"
    ids = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            assert paragraph["qas"]
            for qa in paragraph["qas"]:
                ids.append(qa["id"])
                (answer,) = qa["answers"]
                start = answer["answer_start"]
                assert answer["text"] and context[start:start + len(answer["text"])] == answer["text"]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("split", ["train", "dev"])
def test_ner_tags_are_valid_bio(synthetic_dir, split):
    """CoNLL: 'token TAG' lines, sentences end with a blank line, and every I-X follows B-X or I-X."""
    text = (synthetic_dir / f"ner_{split}.conll").read_text(encoding="utf-8")
    assert text.endswith("\n\n")
    sentences = text.rstrip("\n").split("\n\n")
    tags_seen = set()
    for sentence in sentences:
        previous = "O"
        for line in sentence.split("\n"):
            token, tag = line.split(" ")
            assert token and tag in {"O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"}
            if tag.startswith("I-"):
                assert previous[2:] == tag[2:], sentence
            previous = tag
            tags_seen.add(tag)
    assert {"B-PER", "B-LOC", "B-ORG", "I-PER"} <= tags_seen


# ---------------------------------------------------------------- the corpus speaks the tasks' language

REPOSITORY_DATA = Path(__file__).resolve().parent.parent / "data" / "synthetic"


@pytest.fixture(scope="module")
def synthetic_seed0(tmp_path_factory):
    """The shipped task sets and probe (seed 0, default sizes) beside a 200-story corpus."""
    out = tmp_path_factory.mktemp("synthetic-seed0")
    build_synthetic(out, seed=0, num_documents=200, progress=quiet)
    return out


def squeeze(text):
    """A sentence compared as an uncased model sees it, whatever the spacing of its form (corpus Chinese
    has spaces between words, task Chinese none, CoNLL spaces between tokens)."""
    return "".join(text.split()).lower()


def task_texts(directory):
    """{file name: the texts a model reads from it}: sentences, questions and passages, tagged words."""
    texts = {}
    for split in ("train", "dev"):
        texts[f"sentiment_{split}.tsv"] = [example.text_a
                                           for example in read_tsv(directory / f"sentiment_{split}.tsv")]
        questions = read_squad(directory / f"qa_{split}.json")
        texts[f"qa_{split}.json"] = ([example.question for example in questions]
                                     + sorted({example.context for example in questions}))
        texts[f"ner_{split}.conll"] = [" ".join(sentence.words)
                                       for sentence in read_conll(directory / f"ner_{split}.conll")]
    return texts


def test_synthetic_vocabulary_covers_every_task(synthetic_seed0):
    """A WordPiece vocabulary trained on the corpus alone leaves under 1% [UNK] in every fine-tuning file,
    and every word of the tasks occurs in the corpus (so pretraining has read the tasks' language, not just
    their alphabet). Before the stories told opinions and asked questions, 27% of the sentiment tokens
    (不, 虽然, 但是, ！) and 5% of the QA tokens (？, 哪, 谁) were [UNK]."""
    corpus = synthetic_seed0 / "corpus.txt"
    tokenizer = BertTokenizer.from_vocab_list(train_wordpiece([corpus], 8192))
    corpus_words = set(BasicTokenizer().tokenize(corpus.read_text(encoding="utf-8")))
    for name, texts in task_texts(synthetic_seed0).items():
        tokens = [token for text in texts for token in tokenizer.tokenize(text)]
        unknown = sum(token == "[UNK]" for token in tokens)
        assert unknown < 0.01 * len(tokens), (name, unknown, len(tokens))
        words = {word for text in texts for word in BasicTokenizer().tokenize(text)}
        assert words <= corpus_words, (name, sorted(words - corpus_words)[:10])


def test_synthetic_dev_examples_are_not_in_the_corpus(synthetic_seed0):
    """No sentiment or tagging dev sentence is a corpus line, and no QA dev passage is inside a corpus
    document. The stories left unfiltered do contain dev sentences, so the guard is doing the work."""
    documents = read_documents(synthetic_seed0 / "corpus.txt")
    lines = {squeeze(line) for document in documents for line in document}
    texts = task_texts(synthetic_seed0)
    dev_sentences = {squeeze(text) for text in texts["sentiment_dev.tsv"] + texts["ner_dev.conll"]}
    assert not dev_sentences & lines
    joined = "\n".join("".join(squeeze(line) for line in document) for document in documents)
    contexts = {example.context for example in read_squad(synthetic_seed0 / "qa_dev.json")}
    assert not [context for context in contexts if squeeze(context) in joined]
    unfiltered = {squeeze(line) for document in corpus_documents(0, 200) for line in document}
    assert len(dev_sentences & unfiltered) > 20


def test_synthetic_holdout_never_drops_a_right_context_sentence(synthetic_seed0):
    """No right-context sentence of the corpus' stories is a dev sentence, so the corpus keeps them all:
    leaving one out because of its blank word would make the blank depend on the words to its left."""
    texts = task_texts(synthetic_seed0)
    dev_sentences = {squeeze(text) for text in texts["sentiment_dev.tsv"] + texts["ner_dev.conll"]}
    checked = 0
    for index in range(200):
        language, lines = synthetic_story(0, "corpus", index)
        for line in lines:
            if any(word.family for word in line.words):
                assert squeeze(render([line.words], language)[0]) not in dev_sentences, line
                checked += 1
    assert checked > 500


def test_synthetic_follow_ups_name_the_measured_noun(synthetic_seed0):
    """"Mary liked the cup of tea very much.": the follow-up repeats the measure word and its own noun
    (it once said "the cup of of", taking the word right after the blank for the noun)."""
    measure = SYNTHETIC_RIGHT_CONTEXT["en_measure_word"]
    text = (synthetic_seed0 / "corpus.txt").read_text(encoding="utf-8")
    follow_ups = re.findall(r"liked the (\w+) of (\w+) very much\.", text)
    assert len(follow_ups) > 20
    assert all(measure.word_for_noun(noun) == word for word, noun in follow_ups)


@pytest.mark.parametrize("name", ["probe.jsonl", "sentiment_train.tsv", "sentiment_dev.tsv", "qa_train.json",
                                  "qa_dev.json", "ner_train.conll", "ner_dev.conll"])
def test_committed_synthetic_files_are_current(synthetic_seed0, name):
    """The probe and task files in data/synthetic are what the grammar gives for seed 0: a grammar change
    must rebuild them (python -m minibert data --corpus synthetic), or the corpus would no longer be
    guaranteed to leave their dev examples out."""
    assert (REPOSITORY_DATA / name).read_bytes() == (synthetic_seed0 / name).read_bytes()
