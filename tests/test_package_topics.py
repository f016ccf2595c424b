"""The real-text transfer task (minibert/data/corpora/package_topics.py): balanced, split by document, and
free of the pretraining corpus's sentences."""

import pytest

from minibert.data.corpora import dependency_topics
from minibert.data.corpora.package_topics import LABELS, labelled_documents, split_examples, write_tsv
from minibert.errors import DataError
from minibert.finetune.readers import read_tsv


def fake_documents():
    """label -> documents whose sentences name their label and document, so a leak shows."""
    return {label: [[f"{label} document {d} sentence {s} says something." for s in range(3 + d % 4)]
                    for d in range(30)] for label in ("a", "b", "c")}


def test_splits_are_balanced_and_never_share_a_document():
    train, dev = split_examples(fake_documents(), train_per_label=20, dev_per_label=10, seed=0)
    for examples, size in ((train, 20), (dev, 10)):
        assert sorted(label for _, label in examples).count("a") == size
        assert {label for _, label in examples} == {"a", "b", "c"}
    document_of = lambda sentence: sentence.split(" sentence ")[0]  # noqa: E731
    assert not {document_of(s) for s, _ in train} & {document_of(s) for s, _ in dev}
    assert all(sentence.startswith(label) for sentence, label in train + dev)
    assert split_examples(fake_documents(), 20, 10, seed=0) == (train, dev)  # seeded


def test_a_sentence_repeated_across_documents_stays_on_one_side():
    """The libraries repeat sentences in several documents; each is kept in its first document only, so a
    dev sentence is never also a training sentence."""
    documents = fake_documents()
    repeated = "every document of every label repeats this sentence word for word."
    for docs in documents.values():
        for doc in docs:
            doc.append(repeated)
    train, dev = split_examples(documents, train_per_label=60, dev_per_label=30, seed=0)
    assert not {s for s, _ in train} & {s for s, _ in dev}
    assert [s for s, _ in train + dev].count(repeated) <= 1


def test_asking_for_more_than_a_label_has_is_refused():
    with pytest.raises(DataError, match="label 'a' has .* fewer than"):
        split_examples(fake_documents(), train_per_label=500, dev_per_label=10, seed=0)


def test_written_files_read_back_as_glue_tsv(tmp_path):
    train, _ = split_examples(fake_documents(), 5, 5, seed=1)
    write_tsv(tmp_path / "train.tsv", train)
    examples = read_tsv(tmp_path / "train.tsv")
    assert [(e.text_a, e.label) for e in examples] == train


def test_the_real_sources_exist_and_the_excluded_sentences_stay_out():
    documents = labelled_documents()
    assert set(documents) == set(LABELS) and all(len(docs) >= 10 for docs in documents.values())
    one = documents["http"][0][0]
    assert one not in {s for docs in labelled_documents(exclude={one}).values() for doc in docs for s in doc}


def test_the_dependency_libraries_give_a_second_task_of_the_same_kind(tmp_path, monkeypatch):
    """dependency-topics reads other libraries (those requirements.txt installs) with the same machinery:
    each label has over 1,000 sentences (the builds leave pydocs' out, and the ladder then needs 300 + 200
    a label; sortedcontainers and attrs, 740 in all, kept 484), from libraries package-topics does not read;
    without the libraries the build says what to install instead of failing on an empty label. (The two
    tasks share only what both copy from the standard library, such as str's method docs, and the builds
    leave those out with pydocs'.)"""
    documents = labelled_documents(labels=dependency_topics.LABELS)
    sentences = {label: {s for doc in docs for s in doc} for label, docs in documents.items()}
    assert set(sentences) == set(dependency_topics.LABELS)
    assert all(len(found) >= 1000 for found in sentences.values()), {k: len(v) for k, v in sentences.items()}
    ours, theirs = ({pattern.split(".")[0] for patterns in labels.values() for pattern in patterns}
                    for labels in (dependency_topics.LABELS, LABELS))
    assert not ours & theirs
    monkeypatch.setattr(dependency_topics.importlib.util, "find_spec",
                        lambda name: None if name == "selenium" else object())
    with pytest.raises(DataError, match="selenium, not installed here.*pip install -r requirements.txt"):
        dependency_topics.build_dependency_topics(tmp_path / "task")
    assert not (tmp_path / "task").exists()
