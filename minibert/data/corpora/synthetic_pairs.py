"""Sentence-pair tasks from synthetic stories the corpus never holds: do two sentences belong together?

Two tasks, each a GLUE-style TSV (`sentence1<TAB>sentence2<TAB>label`, as MRPC or RTE), written by
`write_pairs`:

- `coherence`: B is the sentence after A in the same story (`next`), or a sentence from another story in
  the same language (`other`). This is what BERT's NSP pretrains on, asked as a task.
- `order`: A and B are two neighbouring sentences of one story, in their order (`ordered`) or swapped
  (`swapped`). This is what ALBERT's sentence-order prediction (SOP) pretrains on.

The stories come from their own random streams (`synthetic_story` with split "pairs-train" or "pairs-dev"),
never those of corpus.txt or of the probe: the corpus has the grammar's sentences, not these stories. Text
is in natural form.
`python -m minibert experiment nsp` measures NSP, SOP and no sentence loss on both.
"""

import random

from minibert.data.corpora.synthetic import synthetic_story
from minibert.data.corpora.synthetic_grammar import render

PAIR_TASKS = {"coherence": ("next", "other"), "order": ("ordered", "swapped")}


def story_sentences(seed, split, index):
    """(language, [sentence text, ...]) of one story, in natural form."""
    language, lines = synthetic_story(seed, split, index)
    return language, [render([line.words], language, spaced=False)[0] for line in lines]


def pair_examples(kind, seed, split, count):
    """`count` (sentence1, sentence2, label) of task `kind` ("coherence" or "order"), half of each label."""
    if kind not in PAIR_TASKS:
        raise ValueError(f"unknown pair task {kind!r}; choose one of {', '.join(PAIR_TASKS)}")
    rng = random.Random(f"minibert-pairs/{kind}/{seed}/{split}")
    stories = [story_sentences(seed, f"pairs-{split}", index) for index in range(max(8, count // 4))]
    by_language = {}
    for language, sentences in stories:
        by_language.setdefault(language, []).append(sentences)
    positive, negative = PAIR_TASKS[kind]
    examples = []
    while len(examples) < count:
        language, sentences = rng.choice(stories)
        first = rng.randrange(len(sentences) - 1)
        a, b = sentences[first], sentences[first + 1]
        label = positive if len(examples) % 2 == 0 else negative
        if label == "other":
            others = [other for other in by_language[language] if other is not sentences]
            b = rng.choice(rng.choice(others))
        elif label == "swapped":
            a, b = b, a
        examples.append((a, b, label))
    rng.shuffle(examples)
    return examples


def write_pairs(path, kind, seed, split, count):
    """Write `count` examples of task `kind` to `path` as GLUE TSV; returns the path."""
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        file.write("sentence1\tsentence2\tlabel\n")
        file.writelines(f"{a}\t{b}\t{label}\n" for a, b, label in pair_examples(kind, seed, split, count))
    return path
