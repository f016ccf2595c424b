"""The fine-tuning sets of the `synthetic` corpus: sentiment, extractive QA and entity tagging.

The sentiment sentences come from `synthetic_opinions`, the QA passages and the tagged sentences from
`synthetic_stories`: the same grammar writes the corpus, so pretraining reads the tasks' language.
"""

# They are the fine-tuning examples of the course's article (docs/background.md) made into small datasets
# that need no network, written in the formats of the public benchmarks so the same readers serve both:
#
# - `sentiment_{train,dev}.tsv`: GLUE's SST-2 layout, a header `sentence<TAB>label`, then one sentence and
#   its label (`positive` or `negative`) per line: `这部电影真好看	positive`. Negation and contrast decide
#   many labels (`这部电影一点也不好看`, `Although the food was bland, the song was lovely.`), so no single
#   word gives the answer away.
# - `qa_{train,dev}.json`: SQuAD v1.1 JSON. Passages are short synthetic stories; each question has one
#   answer, a span of the passage, and `answer_start` is its character offset in `context`.
# - `ner_{train,dev}.conll`: CoNLL style, one `token TAG` per line, a blank line after each sentence, BIO
#   tags over PER, LOC and ORG. English tokens are words (punctuation separate); Chinese tokens are single
#   characters (小 B-PER, 明 I-PER), as in the usual Chinese NER sets (MSRA, People's Daily), since BERT
#   reads Chinese one character at a time.
#
# All text is in natural form: no spaces inside Chinese. Dev examples never repeat a training example, and
# the corpus never contains a dev sentence (see `synthetic.corpus_documents`).

import json

from minibert.data.corpora.synthetic_grammar import render
from minibert.data.corpora.synthetic_opinions import opinion
from minibert.data.corpora.synthetic_stories import story

# (train, dev) sizes: sentences, passages, sentences. QA has 4,000 training passages (24,000 questions): a
# `mini` checkpoint fine-tuned for 3 epochs at lr 1e-3 reached dev F1 79.1 with 300 and 84.7 with 1,200;
# at the command's lr 3e-4 (3 epochs), 86.2 with 1,200 and 93.4 with 4,000. With 4,000 every kind of
# question is answered on all 480 dev questions but one: "When did A and B go to P?", whose answer stands
# before the facts that pick it out, stays at chance (27 of 73) with either size.
TASK_SIZES = {"sentiment": (2000, 500), "qa": (4000, 80), "ner": (1200, 300)}


def sentiment_example(rng, language):
    """One (sentence, label) in natural form, from the opinion grammar the stories share."""
    words, label = opinion(rng, language)
    return render([words], language, spaced=False)[0], label


def _distinct(examples, count, exclude, key):
    """The first `count` examples whose key is new and not in `exclude` (so dev never repeats train)."""
    seen, kept = set(exclude), []
    for example in examples:
        if key(example) not in seen:
            seen.add(key(example))
            kept.append(example)
            if len(kept) == count:
                return kept
    raise RuntimeError(f"the grammar gave fewer than {count} distinct examples")


def _languages(rng):
    while True:
        yield rng.choice(("zh", "en"))


def write_sentiment(path, rng, count, exclude=()):
    examples = _distinct((sentiment_example(rng, language) for language in _languages(rng)), count,
                         exclude, key=lambda example: example[0])
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        file.write("sentence\tlabel\n")
        file.writelines(f"{sentence}\t{label}\n" for sentence, label in examples)
    return {sentence for sentence, _ in examples}


def qa_passage(rng, language, questions_per_passage=6):
    """(context, [(question, answer text, answer_start)]): a short story and questions with unique answers.

    A question the story answers twice with different answers (they went to the park on two days) is
    dropped: SQuAD v1.1 wants one answer per question.
    """
    lines = story(rng, language, days=(2, 3), conversation=False)
    context, spans = render([line.words for line in lines], language, spaced=False)
    answers = {}
    for line, line_spans in zip(lines, spans, strict=True):
        for question_words, first, last in line.questions:
            question = render([question_words], language, spaced=False)[0]
            start, end = line_spans[first][0], line_spans[last - 1][1]
            answers.setdefault(question, []).append((context[start:end], start))
    unique = [(question, *found[0]) for question, found in answers.items()
              if len({text for text, _ in found}) == 1]
    return context, rng.sample(unique, min(questions_per_passage, len(unique)))


def write_qa(path, rng, count, split, exclude=()):
    passages = _distinct((qa_passage(rng, language) for language in _languages(rng)), count, exclude,
                         key=lambda passage: passage[0])
    data = []
    for number, (context, questions) in enumerate(passages):
        qas = [{"id": f"synthetic-{split}-{number}-{index}", "question": question,
                "answers": [{"text": text, "answer_start": start}]}
               for index, (question, text, start) in enumerate(questions)]
        paragraphs = [{"context": context, "qas": qas}]
        data.append({"title": f"synthetic {split} {number}", "paragraphs": paragraphs})
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        json.dump({"version": "1.1", "data": data}, file, ensure_ascii=False)
        file.write("\n")
    return {context for context, _ in passages}


def tagged_tokens(words, language):
    """[(token, BIO tag)] for a sentence: English words split on spaces, Chinese words into characters."""
    tokens = []
    for word in words:
        pieces = list(word.text) if language == "zh" else word.text.split()
        for index, piece in enumerate(pieces):
            tag = "O" if word.entity is None else ("B-" if index == 0 else "I-") + word.entity
            tokens.append((piece, tag))
    return tokens


def _ner_sentences(rng):
    """Story sentences as token lists: every sentence with an entity, and one in five of the others.

    Right-context sentences (`小明 喜欢 喝 茶 。`) are left out. The corpus leaves out every dev sentence
    (`synthetic.corpus_documents`), and leaving out a right-context sentence would tie its blank word to
    the names on its left, which the probe needs to be independent of it.
    """
    for language in _languages(rng):
        for line in story(rng, language):
            if any(word.family for word in line.words):
                continue
            has_entity = any(word.entity for word in line.words)
            if has_entity or rng.random() < 0.2:
                yield tuple(tagged_tokens(line.words, language))


def write_ner(path, rng, count, exclude=()):
    sentences = _distinct(_ner_sentences(rng), count, exclude,
                          key=lambda tokens: " ".join(token for token, _ in tokens))
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        for tokens in sentences:
            file.writelines(f"{token} {tag}\n" for token, tag in tokens)
            file.write("\n")
    return {" ".join(token for token, _ in tokens) for tokens in sentences}

