"""Stories: the documents of the `synthetic` corpus, built from `synthetic_grammar`.

A story follows one cast (two or three people, the city they live in, the organisation one works at)
through a week: an introduction, then a few days in order, each day an outing and what happened, then a
closing line. This is what makes next-sentence prediction learnable: an IsNext B talks about the same
people and places as A, while a NotNext B (from another story) names other people, other places, often
another language. The days run forward (星期一 before 星期三, Monday before Wednesday), so sentence-order
prediction (ALBERT's SOP) is learnable too.
"""

# Among a day's sentences are the right-context sentences of `SYNTHETIC_RIGHT_CONTEXT`; their nouns are drawn
# independently of the story, so no earlier sentence hints at the blank word either.
#
# The stories also speak the language of the fine-tuning tasks, as BERT's pretraining text must (a model
# cannot transfer what it never read):
#
# - on some days the pair talk, and their opinions are sentences of the sentiment grammar
#   (`synthetic_opinions`): negation, 虽然 ... 但是 contrast, ！;
# - the facts of a story (who lives where, works where, went where and when) are what QA passages are made
#   of, and near the end a visitor asks a cast member about them with the QA task's own questions
#   ("Where does Tom work?", `谁 是 他们 的 邻居 ？`), answered with the fact's words;
# - people, cities and organisations are the entities the tagging task labels.
#
# Each line may carry questions for the QA task: (question words, answer span in the line's words).

from dataclasses import dataclass, field

from minibert.data.corpora.synthetic_grammar import (
    CITIES,
    DAYS,
    FIRMS,
    NAMES,
    ORGANISATION_KINDS,
    PLACES,
    SURNAMES_EN,
    SYNTHETIC_RIGHT_CONTEXT,
    Word,
    fill,
    right_context_sentence,
)
from minibert.data.corpora.synthetic_opinions import opinion

# Sentence templates, each with its questions: (question template, first answer slot, last answer slot).
INTRODUCTIONS = {
    "zh": (
        ("{A} 和 {B} 是 好 朋友 。", ()),
        ("他们 都 住 在 {CITY} 。", (("{A} 和 {B} 住 在 哪里 ？", "CITY", "CITY"),
                                 ("{A} 住 在 哪个 城市 ？", "CITY", "CITY"))),
        ("{A} 在 {ORG} 工作 。", (("{A} 在 哪里 工作 ？", "ORG", "ORG"), ("谁 在 {ORG} 工作 ？", "A", "A"))),
    ),
    "en": (
        ("{A_FULL} and {B_FULL} are good friends .", ()),
        ("They both live in {CITY} .", (("Where do {A} and {B} live ?", "CITY", "CITY"),
                                        ("Which city does {A} live in ?", "CITY", "CITY"))),
        ("{A} works at {ORG} .", (("Where does {A} work ?", "ORG", "ORG"),
                                  ("Who works at {ORG} ?", "A", "A"))),
    ),
}
THIRD_PERSON = {
    "zh": ("{C} 是 他们 的 邻居 ， 也 住 在 {CITY} 。", (("谁 是 他们 的 邻居 ？", "C", "C"),)),
    "en": ("{C_FULL} is their neighbour in {CITY} .", (("Who is their neighbour ?", "C_FULL", "C_FULL"),)),
}
OUTINGS = {
    "zh": ("{DAY} ， {A} 和 {B} 去 了 {PLACE} 。", (
        ("{DAY} {A} 和 {B} 去 了 哪里 ？", "PLACE", "PLACE"),
        ("{A} 和 {B} 什么 时候 去 了 {PLACE} ？", "DAY", "DAY"),
        ("{DAY} 谁 和 {A} 一起 去 了 {PLACE} ？", "B", "B"),
    )),
    "en": ("On {DAY} , {A} and {B} went to {PLACE} .", (
        ("Where did {A} and {B} go on {DAY} ?", "PLACE", "PLACE"),
        ("When did {A} and {B} go to {PLACE} ?", "DAY", "DAY"),
        ("Who went to {PLACE} with {A} on {DAY} ?", "B", "B"),
    )),
}
EVENTS = {
    "zh": ("天气 很 好 ， {A} 很 高兴 。", "{B} 在 那里 拍 了 很多 照片 。", "他们 玩 得 很 开心 。",
           "{A} 觉得 有点 累 。", "晚上 ， {B} 给 {A} 打 了 电话 。", "{A} 说 {CITY} 的 秋天 最 美 。"),
    "en": ("The weather was lovely and {A} was happy .", "{B} took many photos there .",
           "They had a wonderful time .", "{A} felt a little tired .", "In the evening , {B} called {A} .",
           "{A} said that autumn is the best season in {CITY} ."),
}
# Said right after a measure-word sentence, about the same thing: "小红 很 喜欢 这 本 书 。"
FOLLOW_UPS = {"zh": "{B} 很 喜欢 这 {MEASURE} {NOUN} 。",
              "en": "{B} liked the {MEASURE} of {NOUN} very much ."}
CLOSINGS = {
    "zh": ("{A} 和 {B} 都 觉得 这 个 星期 很 有意思 。", "这 是 {A} 最 开心 的 一 个 星期 。"),
    "en": ("{A} and {B} both enjoyed the week .", "It was the best week {A} had in a long time ."),
}
# Said before the pair's opinions (sentences of the sentiment grammar, in the first person).
OPINION_LEAD_INS = {
    "zh": ("{A} 和 {B} 聊 了 聊 最近 的 事 。", "回家 的 路上 ， {B} 说 了 说 自己 的 看法 。",
           "{A} 想起 了 上 个 月 的 事 。"),
    "en": ("{A} and {B} talked about the last few weeks .", "On the way home , {B} shared some opinions .",
           "{A} remembered the month before ."),
}
# A visitor asks a question the story has answered; a friend (not the one asked about) answers with the
# answer's words.
VISITS = {"zh": "后来 ， {V} 来 看 {A} 和 {B} 。", "en": "Later , {V} came to see {A} and {B} ."}
ASKS = {"zh": "{V} 问 ： {QUESTION}", "en": "{V} asked : {QUESTION}"}
ANSWERS = {"zh": "{FRIEND} 回答 ： {ANSWER} 。", "en": "{FRIEND} answered : {ANSWER} ."}
RIGHT_CONTEXT_SHARE = 0.6  # of a day's extra sentences; the rest are events
FOLLOW_UP_SHARE = 0.5
OPINION_SHARE = 0.5  # of days with a talk: one or two opinions
CONVERSATION_SHARE = 0.7  # of stories with a visitor who asks one or two questions


@dataclass
class Line:
    """One sentence of a story and the QA questions it answers: (question words, answer start, answer end)."""

    words: list
    questions: list = field(default_factory=list)


def draw_cast(rng, language):
    """The slots every template of one story shares: people, their full names, city, organisation."""
    people = rng.sample(NAMES[language], 3)
    city = rng.choice(CITIES[language])
    if rng.random() < 0.5:
        organisation = rng.choice(FIRMS[language])
    else:
        organisation = city + (" " if language == "en" else "") + rng.choice(ORGANISATION_KINDS[language])
    cast = {"CITY": Word(city, "LOC"), "ORG": Word(organisation, "ORG")}
    for slot, name in zip("ABC", people, strict=True):
        cast[slot] = Word(name, "PER")
        full = f"{name} {rng.choice(SURNAMES_EN)}" if language == "en" else name
        cast[f"{slot}_FULL"] = Word(full, "PER")
    return cast


def _line(template, questions, slots):
    words, positions = fill(template, **slots)
    answered = []
    for question, first, last in questions:
        question_words, _ = fill(question, **slots)
        answered.append((question_words, positions[first][0], positions[last][1]))
    return Line(words, answered)


def _day(rng, language, cast, day, with_third_person, unused_events):
    """The lines of one day: an outing, then one to three things that happened, and on some days a talk.

    The pair is named in cast order (A before B before C) so that one question always reads the same way.
    """
    first, second = sorted(rng.sample("ABC" if with_third_person else "AB", 2))
    slots = {**cast, "A": cast[first], "B": cast[second], "DAY": Word(DAYS[language][day]),
             "PLACE": Word(rng.choice(PLACES[language]))}
    lines = [_line(*OUTINGS[language], slots)]
    families = [family for family in SYNTHETIC_RIGHT_CONTEXT.values() if family.language == language]
    for _ in range(rng.randint(1, 3)):
        if rng.random() >= RIGHT_CONTEXT_SHARE:
            if unused_events:  # an event is told once per story
                lines.append(_line(unused_events.pop(rng.randrange(len(unused_events))), (), slots))
            continue
        family = rng.choice(families)
        words = right_context_sentence(rng, family, slots["A"], slots["B"], slots["DAY"])
        lines.append(Line(words))
        if family.name.endswith("measure_word") and rng.random() < FOLLOW_UP_SHARE:
            blank = next(i for i, word in enumerate(words) if word.family)
            # the noun that selected the measure word ("a cup of tea": not the "of" right after it)
            noun = next(word for word in words[blank + 1:] if word.text in family.nouns[words[blank].text])
            follow_up = {**slots, "MEASURE": Word(words[blank].text), "NOUN": noun}
            lines.append(_line(FOLLOW_UPS[language], (), follow_up))
    if rng.random() < OPINION_SHARE:
        lines.append(_line(rng.choice(OPINION_LEAD_INS[language]), (), slots))
        lines.extend(Line(opinion(rng, language)[0]) for _ in range(rng.randint(1, 2)))
    return lines


def _conversation(rng, language, cast, lines):
    """A visitor asks one or two questions the story has answered, each with a single answer so far."""
    answers = {}  # question text -> (question words, {answer texts}, answer words)
    for line in lines:
        for question, first, last in line.questions:
            key = " ".join(word.text for word in question)
            found = answers.setdefault(key, (question, set(), line.words[first:last]))
            found[1].add(" ".join(word.text for word in line.words[first:last]))
    unique = [(question, answer) for question, texts, answer in answers.values() if len(texts) == 1]
    cast_names = {cast[slot].text for slot in "ABC"}
    visitor = rng.choice([name for name in NAMES[language] if name not in cast_names])
    slots = {**cast, "V": Word(visitor, "PER")}
    said = [_line(VISITS[language], (), slots)]
    for question, answer in rng.sample(unique, min(rng.randint(1, 2), len(unique))):
        friend = cast["B"] if cast["A"] in answer else cast["A"]
        said.append(_line(ASKS[language], (), {**slots, "QUESTION": question}))
        said.append(_line(ANSWERS[language], (), {**slots, "FRIEND": friend, "ANSWER": list(answer)}))
    return said


def story(rng, language, days=(3, 5), conversation=True):
    """One document: a list of Lines in `language` ("zh" or "en"), with `days` (low, high) days in it.

    conversation=False leaves out the visitor's questions (QA passages: a passage that quotes the question
    next to its answer would teach a shortcut, not reading).
    """
    cast = draw_cast(rng, language)
    with_third_person = rng.random() < 0.5
    lines = [_line(template, questions, cast) for template, questions in INTRODUCTIONS[language]]
    if with_third_person:
        lines.append(_line(*THIRD_PERSON[language], cast))
    unused_events = list(EVENTS[language])
    for day in sorted(rng.sample(range(7), rng.randint(*days))):
        lines.extend(_day(rng, language, cast, day, with_third_person, unused_events))
    if conversation and rng.random() < CONVERSATION_SHARE:
        lines.extend(_conversation(rng, language, cast, lines))
    lines.append(_line(rng.choice(CLOSINGS[language]), (), cast))
    return lines
