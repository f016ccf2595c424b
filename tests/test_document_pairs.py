"""The real-text sentence-pair task (minibert/data/corpora/document_pairs.py) and the finetune command's
real-text tasks (minibert/finetune/tasks.py): balanced, split by document, seeded, made of real sentences,
free of the pretraining corpus's sentences, and read by the classification task."""

from collections import Counter

import pytest

from minibert.data.corpora.corpus_file import write_corpus
from minibert.data.corpora.document_pairs import (
    MAX_GAP,
    build_document_pairs,
    build_story_pairs,
    first_occurrences,
    split_pairs,
    story_documents,
)
from minibert.data.corpora.package_topics import labelled_documents
from minibert.data.corpora.synthetic import synthetic_story
from minibert.data.corpora.synthetic_grammar import render
from minibert.errors import DataError
from minibert.finetune import FineTuneConfig, tasks
from minibert.finetune.finetuning_run import run_finetuning
from minibert.finetune.readers import read_tsv
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import train_wordpiece


def fake_documents():
    """library -> documents whose sentences name their library, document and place, so a leak shows."""
    return {library: [[f"{library} document {d} sentence {s} says something." for s in range(2 + d % 5)]
                      for d in range(40)] for library in ("a", "b", "c")}


def where(sentence):
    """(library, document, place) of a fake sentence."""
    words = sentence.split()
    return words[0], int(words[2]), int(words[4])


def test_pairs_are_balanced_near_and_split_by_document():
    train, dev = split_pairs(fake_documents(), train_per_library=40, dev_per_library=20, seed=0)
    for pairs, count in ((train, 40), (dev, 20)):
        assert Counter((where(a)[0], label) for a, _, label in pairs) == {
            (library, label): count for library in "abc" for label in ("same", "other")}
        for a, b, label in pairs:
            (library_a, document_a, place_a), (library_b, document_b, place_b) = where(a), where(b)
            assert library_a == library_b  # `other` too: the label is never just "same library"
            if label == "same":
                assert document_a == document_b and 0 < place_b - place_a <= MAX_GAP
            else:
                assert document_a != document_b
        # each A and each B is in as many `same` as `other` pairs: alone, a sentence says nothing
        for side in (0, 1):
            assert (Counter(pair[side] for pair in pairs if pair[2] == "same")
                    == Counter(pair[side] for pair in pairs if pair[2] == "other"))
    documents = lambda pairs: {where(s)[:2] for a, b, _ in pairs for s in (a, b)}  # noqa: E731
    assert not documents(train) & documents(dev)


def test_pairs_are_seeded():
    first = split_pairs(fake_documents(), 40, 20, seed=3)
    assert split_pairs(fake_documents(), 40, 20, seed=3) == first
    assert split_pairs(fake_documents(), 40, 20, seed=4) != first


def test_asking_for_more_pairs_than_the_documents_give_is_refused():
    with pytest.raises(DataError, match="'a': these documents give .* fewer than the 5000"):
        split_pairs(fake_documents(), train_per_library=5000, dev_per_library=20, seed=0)


def test_a_repeated_sentence_is_kept_in_its_first_document_only():
    documents = {"a": [["one said.", "two said.", "one said."], ["two said.", "three said."]],
                 "b": [["three said."], ["four  said.", "four said."]]}
    assert first_occurrences(documents) == {"a": [["one said.", "two said."], ["three said."]],
                                            "b": [["four  said."]]}


def test_real_pairs_are_real_sentences_without_the_pretraining_corpus(tmp_path):
    """Both sentences of every pair are sentences of the named libraries' documents, a `same` pair's B is
    one of the MAX_GAP sentences after its A, and the sentences of the given corpus stay out."""
    every = labelled_documents()
    kept_out = every["http"][0][:2] + every["terminal"][1][:2]
    corpus = write_corpus(tmp_path / "corpus", "kept-out", [kept_out], progress=lambda _: None)
    train_path, dev_path = build_document_pairs(tmp_path / "task", 40, 20, seed=0, pretraining_corpus=corpus)
    documents = first_occurrences(labelled_documents(exclude=frozenset(kept_out)))
    place = {" ".join(s.split()): (name, d, i) for name, docs in documents.items()
             for d, doc in enumerate(docs) for i, s in enumerate(doc)}
    examples = read_tsv(train_path) + read_tsv(dev_path)
    assert len(examples) == 2 * 3 * (40 + 20)
    for example in examples:
        (library_a, document_a, i), (library_b, document_b, j) = place[example.text_a], place[example.text_b]
        assert library_a == library_b
        assert (example.label == "same") == (document_a == document_b)
        assert example.label == "other" or 0 < j - i <= MAX_GAP
    assert not {" ".join(s.split()) for s in kept_out} & {s for e in examples for s in (e.text_a, e.text_b)}


def test_the_finetune_task_writes_its_files_once_and_reads_them_as_pairs(tmp_path, monkeypatch):
    """`--task doc-pairs` writes its files when missing (leaving out the pretraining corpus, here a small
    one in place of pydocs), finds them the second time, and fine-tuning reads them as sentence pairs."""
    kept_out = labelled_documents()["packaging"][0][:2]
    corpus = write_corpus(tmp_path / "corpus", "kept-out", [kept_out], progress=lambda _: None)
    monkeypatch.setattr(tasks, "resolve_corpus", lambda name, folder, log: corpus)
    written = []
    train, dev = tasks.data_files("doc-pairs", data_dir=tmp_path / "pairs", log=written.append)
    assert len(written) == 1 and str(corpus) in written[0]
    assert tasks.data_files("doc-pairs", data_dir=tmp_path / "pairs", log=written.append) == (train, dev)
    assert len(written) == 1  # the second call found the files
    examples = read_tsv(train) + read_tsv(dev)
    assert not {" ".join(s.split()) for s in kept_out} & {s for e in examples for s in (e.text_a, e.text_b)}

    folder = tmp_path / "tiny"
    folder.mkdir()
    tokens = train_wordpiece([train, dev], 500, out=folder / "vocab.txt")
    BertModel(BertConfig.preset("tiny", vocab_size=len(tokens))).save_pretrained(folder)
    settings = FineTuneConfig(learning_rate=1e-3, epochs=1, batch_size=16, seed=0)
    task, _, result = run_finetuning("doc-pairs", folder, train=train, dev=dev, settings=settings,
                                     random_init=True, log=None, train_limit=64, dev_limit=32)
    assert task.labels == ["other", "same"]
    assert all(example.text_b for example in task.read(dev))
    assert len(result.history) == 1 and 0 <= result.best_metrics["accuracy"] <= 1


def test_story_pairs_are_pairs_of_held_out_stories(tmp_path):
    """story-pairs: the same question on synthetic stories of their own random streams, never the corpus's
    (its stories are those of split "corpus"), every `other` B in A's language."""
    train_path, dev_path = build_story_pairs(tmp_path, 20, 20, seed=0, stories=40)
    stories = story_documents(40, seed=0)
    place = {s: (language, d, i) for language, docs in first_occurrences(stories).items()
             for d, doc in enumerate(docs) for i, s in enumerate(doc)}
    examples = read_tsv(train_path) + read_tsv(dev_path)
    assert Counter(e.label for e in examples) == {"same": 80, "other": 80}
    for example in examples:
        (language_a, story_a, i), (language_b, story_b, j) = place[example.text_a], place[example.text_b]
        assert language_a == language_b and (example.label == "same") == (story_a == story_b)
        assert example.label == "other" or 0 < j - i <= MAX_GAP
    corpus_story = [render([line.words], language, spaced=False)[0]
                    for language, lines in [synthetic_story(0, "corpus", 0)] for line in lines]
    assert corpus_story not in stories["en"] + stories["zh"]
