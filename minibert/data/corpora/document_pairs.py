"""A sentence-pair task: do sentences A and B come from the same document?

`doc-pairs` asks it of real text, package_topics' docstrings of the libraries pip carries (no pretraining
corpus here reads them), grouped by module or class; `story-pairs` of synthetic stories the synthetic corpus
never holds. A pair is `same` when B is one of the MAX_GAP sentences right after A in A's document, `other`
when B comes from another document of the same library (or story language). Whole documents go to train or
dev, and every split holds as many `same` as `other` pairs, and as many pairs of each library.
"""

# Why "near" and not "next" or "anywhere in the document":
# - B right after A (MAX_GAP = 1) is NSP's own question (IsNext), so a model pretrained with NSP would be
#   tested on its training question, not on a sentence relation it has to transfer;
# - B anywhere in a long class document is often about another method, a pair even a reader cannot call;
# - B among the next 3 sentences is often still about A's function or idea: whether two sentences belong
#   together is the relation the paper says NSP teaches (BERT section 3.1, "Task #2").
# Keeping A before B keeps NSP's segment order, so the pretrained [CLS] sees the layout it was trained on.
#
# Why `other` comes from the same library: with any library, "same library?" (package_topics' question)
# would answer most pairs; and from a story of the same language, since a language change alone says `other`
# (in NSP's pairs of the synthetic corpus it gives a NotNext away half the time).
#
# Why every A and every B is in one `same` and one `other` pair: each sentence alone then says nothing about
# the label (a first sentence, "This module ...", is never a `same` B, and would give a random B away); only
# the two together do.

import numpy as np

from minibert.data.corpora.package_topics import (
    corpus_sentences,
    first_occurrences,
    labelled_documents,
    split_documents,
    write_splits,
)
from minibert.data.corpora.synthetic import synthetic_story
from minibert.data.corpora.synthetic_grammar import render
from minibert.errors import DataError

MAX_GAP = 3  # B is one of the 3 sentences after A
PAIRS_PER_DOCUMENT = 10  # at most, per split: a long class document would otherwise fill half a split
LABELS = ("same", "other")
PAIR_HEADER = ("sentence1", "sentence2", "label")  # GLUE's sentence-pair columns (RTE, STS-B)
STORIES = 300  # about 150 a language, 24 sentences each: 1,500 pairs a language at most


def near_pairs(document, max_gap=MAX_GAP):
    """[(A, B)]: every sentence with each of the `max_gap` sentences after it."""
    return [(document[i], document[j]) for i in range(len(document))
            for j in range(i + 1, min(i + 1 + max_gap, len(document)))]


def library_pairs(docs, count, rng, max_gap=MAX_GAP):
    """`count` `same` pairs and `count` `other` pairs of one library's documents: [(A, B, label)]; count None:
    every pair the documents give."""
    picked = []  # (document, A, B): grouped by document, the documents in a random order
    for index in rng.permutation(len(docs)):
        pairs = near_pairs(docs[index], max_gap)
        picked += [(index, *pairs[k]) for k in rng.permutation(len(pairs))[:PAIRS_PER_DOCUMENT]]
    count = len(picked) if count is None else count
    if len(picked) < count:
        raise DataError(f"these documents give {len(picked)} pairs, fewer than the {count} asked for; ask for "
                        "fewer")
    chosen = sorted(rng.choice(len(picked), count, replace=False))  # sorted: still grouped by document
    picked = [picked[k] for k in chosen]
    # Each A meets the B of the pair `shift` places on. No document holds more than `shift` of the pairs,
    # and the pairs are grouped by document, so that B is from another document when shift <= count / 2.
    shift = max(np.unique([document for document, _, _ in picked], return_counts=True)[1])
    if 2 * shift > count:
        raise DataError(f"one document holds {shift} of the {count} pairs asked for, so an `other` pair "
                        f"cannot always be made; ask for at least {2 * PAIRS_PER_DOCUMENT} pairs")
    same = [(a, b, "same") for _, a, b in picked]
    other = [(a, picked[(k + shift) % count][2], "other") for k, (_, a, _) in enumerate(picked)]
    return same + other


def split_pairs(documents, train_per_library, dev_per_library, seed, max_gap=MAX_GAP):
    """(train, dev): lists of (A, B, label), `*_per_library` `same` pairs and as many `other` pairs from each
    library of `documents` ({library: [[sentence, ...] per document]}), whole documents per side. A sentence
    found in several documents is kept in the first only. train_per_library None: every pair there is."""
    rng = np.random.default_rng(seed)
    train, dev = [], []
    for library, docs in first_occurrences(documents).items():
        # a document counts for the pairs it can give, so that dev holds enough of them
        size = lambda doc: min(len(near_pairs(doc, max_gap)), PAIRS_PER_DOCUMENT)  # noqa: E731
        train_docs, dev_docs = split_documents(docs, dev_per_library, rng, size)
        try:
            dev += library_pairs(dev_docs, dev_per_library, rng, max_gap)
            train += library_pairs(train_docs, train_per_library, rng, max_gap)
        except DataError as error:
            raise DataError(f"{library!r}: {error}") from None
    return [train[i] for i in rng.permutation(len(train))], [dev[i] for i in rng.permutation(len(dev))]


def build_document_pairs(out_dir, train_per_library=300, dev_per_library=100, seed=0, pretraining_corpus=None):
    """Write train.tsv and dev.tsv (`sentence1<TAB>sentence2<TAB>label`) to `out_dir`; returns their paths.

    pretraining_corpus: a corpus file (Google's format), or several, whose sentences must not appear in the
    task. train_per_library None: every pair the training documents give."""
    documents = labelled_documents(corpus_sentences(pretraining_corpus))
    train, dev = split_pairs(documents, train_per_library, dev_per_library, seed)
    return write_splits(out_dir, train, dev, header=PAIR_HEADER)


def story_documents(count, seed=0):
    """{language: [[sentence, ...] per story]}: `count` stories of the synthetic grammar, in natural form,
    from random streams of their own ("pairs"), so that no story of the synthetic corpus is among them."""
    documents = {"en": [], "zh": []}
    for index in range(count):
        language, lines = synthetic_story(seed, "pairs", index)
        documents[language].append([render([line.words], language, spaced=False)[0] for line in lines])
    return documents


def build_story_pairs(out_dir, train_per_language=300, dev_per_language=100, seed=0, stories=STORIES):
    """The same question on synthetic stories, for models pretrained on the synthetic corpus: is B one of the
    sentences after A in its story, or from another story of the same language? Writes train.tsv and
    dev.tsv like `build_document_pairs`."""
    train, dev = split_pairs(story_documents(stories, seed), train_per_language, dev_per_language, seed)
    return write_splits(out_dir, train, dev, header=PAIR_HEADER)
