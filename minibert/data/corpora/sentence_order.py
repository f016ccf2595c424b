"""A sentence-pair task of synthetic stories: are sentences A and B in their order, or swapped?

ALBERT's sentence-order prediction (SOP, Lan et al. 2019, §4.2) asked as a task: A and B are neighbouring
sentences of one story, given in their order (`ordered`) or swapped (`swapped`), half of each. It is the
counterpart of `story-pairs` (document_pairs.py: is B near A in its story, or from another one?), which is
what BERT's NSP practises; `python -m minibert experiment nsp` measures NSP, SOP and no sentence loss on
both. The stories are document_pairs' own (`story_documents`: random streams the synthetic corpus never
uses); whole stories go to train or dev.
"""

import random

from minibert.data.corpora.document_pairs import story_documents

LABELS = ("ordered", "swapped")
STORIES = 300  # as story-pairs: about 150 a language, 24 sentences each
DEV_SHARE = 0.25  # of the stories, held out for dev


def order_pairs(stories, count, rng):
    """`count` (A, B, label) from `stories` (lists of sentences), alternating the labels."""
    examples = []
    while len(examples) < count:
        sentences = rng.choice(stories)
        first = rng.randrange(len(sentences) - 1)
        a, b = sentences[first], sentences[first + 1]
        label = LABELS[len(examples) % 2]
        examples.append((a, b, label) if label == "ordered" else (b, a, label))
    rng.shuffle(examples)
    return examples


def sentence_order_examples(train_size, dev_size, seed=0):
    """(train, dev) lists of (A, B, label): `train_size` and `dev_size` pairs, whole stories per side."""
    stories = [story for documents in story_documents(STORIES, seed).values() for story in documents]
    rng = random.Random(f"minibert-sentence-order/{seed}")
    rng.shuffle(stories)
    held_out = int(len(stories) * DEV_SHARE)
    return order_pairs(stories[held_out:], train_size, rng), order_pairs(stories[:held_out], dev_size, rng)
