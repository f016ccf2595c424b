"""The fine-tuning sets of the `synthetic` corpus: sentiment, extractive QA and entity tagging.

They are the seed's fine-tuning examples made into small datasets that need no network, written in the
formats of the public benchmarks so the same readers serve both:

- `sentiment_{train,dev}.tsv`: GLUE's SST-2 layout, a header `sentence<TAB>label`, then one sentence and
  its label (`positive` or `negative`) per line: `这部电影真好看	positive`. Negation and contrast decide
  many labels (`这部电影一点也不好看`, `Although the food was bland, the song was lovely.`), so no single
  word gives the answer away.
- `qa_{train,dev}.json`: SQuAD v1.1 JSON. Passages are short synthetic stories; each question has one
  answer, a span of the passage, and `answer_start` is its character offset in `context`.
- `ner_{train,dev}.conll`: CoNLL style, one `token TAG` per line, a blank line after each sentence, BIO
  tags over PER, LOC and ORG. English tokens are words (punctuation separate); Chinese tokens are single
  characters (小 B-PER, 明 I-PER), as in the usual Chinese NER sets (MSRA, People's Daily), since BERT
  reads Chinese one character at a time.

All text is in natural form: no spaces inside Chinese. Dev examples never repeat a training example.
"""

import json

from minibert.data.corpora.synthetic_grammar import render
from minibert.data.corpora.synthetic_stories import story

LABELS = ("negative", "positive")

# (subject, positive adjectives, negative adjectives)
SENTIMENT_SUBJECTS = {
    "zh": (("这部电影", ("好看", "精彩", "感人"), ("难看", "无聊", "没意思")),
           ("这本书", ("有趣", "精彩", "好看"), ("无聊", "枯燥", "难懂")),
           ("这家餐厅的菜", ("好吃", "新鲜", "地道"), ("难吃", "太咸", "不新鲜")),
           ("这首歌", ("好听", "动听", "感人"), ("难听", "刺耳", "无聊")),
           ("这次旅行", ("愉快", "难忘", "轻松"), ("糟糕", "累人", "扫兴")),
           ("这个手机", ("好用", "漂亮", "便宜"), ("难用", "太慢", "太贵"))),
    "en": (("the movie", ("great", "wonderful", "moving"), ("boring", "terrible", "dull")),
           ("the book", ("interesting", "brilliant", "fun"), ("boring", "confusing", "dull")),
           ("the food", ("delicious", "fresh", "tasty"), ("bland", "awful", "stale")),
           ("the song", ("beautiful", "catchy", "lovely"), ("annoying", "awful", "dull")),
           ("the trip", ("wonderful", "relaxing", "fun"), ("exhausting", "disappointing", "awful")),
           ("the phone", ("fast", "reliable", "handy"), ("slow", "unreliable", "clumsy"))),
}
DEGREES = {"zh": ("真", "很", "非常", "特别", "十分"), "en": ("really", "very", "quite", "truly", "so")}
# (template, whether it flips the adjective's polarity). {OTHER} is a clause of the opposite polarity.
SENTIMENT_TEMPLATES = {
    "zh": (("{S}{D}{ADJ}", False), ("我觉得{S}{D}{ADJ}", False), ("虽然{OTHER}，但是{S}{D}{ADJ}", False),
           ("{S}不{ADJ}", True), ("{S}一点也不{ADJ}", True), ("我不觉得{S}{ADJ}", True),
           ("{S}没有想象中那么{ADJ}", True)),
    "en": (("{S} was {D} {ADJ}.", False), ("I thought {S} was {D} {ADJ}.", False),
           ("Although {OTHER}, {S} was {D} {ADJ}.", False), ("{S} was not {ADJ}.", True),
           ("{S} was not {ADJ} at all.", True), ("I did not think {S} was {ADJ}.", True),
           ("{S} was never {ADJ}.", True)),
}
# Adjectives that already carry a negation (不新鲜) are not negated again: "不不新鲜" is not Chinese.
_NEGATED_ZH = ("不", "没")

# (train, dev) sizes: sentences, passages, sentences.
TASK_SIZES = {"sentiment": (2000, 500), "qa": (300, 80), "ner": (1200, 300)}


def _adjective(rng, subject, positive, negatable):
    _, good, bad = subject
    choices = [adj for adj in (good if positive else bad) if not (negatable and adj.startswith(_NEGATED_ZH))]
    return rng.choice(choices)


def sentiment_example(rng, language):
    """One (sentence, label): the label is drawn first, then a template, then words that give that label."""
    label = rng.choice(LABELS)
    template, flips = rng.choice(SENTIMENT_TEMPLATES[language])
    subject = rng.choice(SENTIMENT_SUBJECTS[language])
    other_subject = rng.choice(SENTIMENT_SUBJECTS[language])
    positive_adjective = (label == "positive") != flips
    be = "" if language == "zh" else " was "
    other = other_subject[0] + be + _adjective(rng, other_subject, not positive_adjective, False)
    sentence = template.format(S=subject[0], D=rng.choice(DEGREES[language]), OTHER=other,
                               ADJ=_adjective(rng, subject, positive_adjective, flips))
    if language == "zh":
        sentence += rng.choice(("", "。", "！"))
    return sentence[0].upper() + sentence[1:], label


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
    lines = story(rng, language, days=(2, 3))
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
    """Story sentences as token lists: every sentence with an entity, and one in five of the others."""
    for language in _languages(rng):
        for line in story(rng, language):
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

