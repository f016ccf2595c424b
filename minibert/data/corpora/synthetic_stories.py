"""Stories: the documents of the `synthetic` corpus, built from `synthetic_grammar`.

A story follows one cast (two or three people, the city they live in, the organisation one works at)
through a week: an introduction, then a few days in order, each day an outing and what happened, then a
closing line. This is what makes next-sentence prediction learnable: an IsNext B talks about the same
people and places as A, while a NotNext B (from another story) names other people, other places, often
another language. The days run forward (星期一 before 星期三, Monday before Wednesday), so sentence-order
prediction (ALBERT's SOP) is learnable too.

Among a day's sentences are the right-context sentences of `SYNTHETIC_RIGHT_CONTEXT`; their nouns are drawn
independently of the story, so no earlier sentence hints at the blank word either.

Each line may carry questions for the QA task: (question words, answer span in the line's words).
"""

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
RIGHT_CONTEXT_SHARE = 0.6  # of a day's extra sentences; the rest are events
FOLLOW_UP_SHARE = 0.5


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
    """The lines of one day: an outing, then one to three things that happened.

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
            follow_up = {**slots, "MEASURE": Word(words[blank].text), "NOUN": words[blank + 1]}
            lines.append(_line(FOLLOW_UPS[language], (), follow_up))
    return lines


def story(rng, language, days=(3, 5)):
    """One document: a list of Lines in `language` ("zh" or "en"), with `days` (low, high) days in it."""
    cast = draw_cast(rng, language)
    with_third_person = rng.random() < 0.5
    lines = [_line(template, questions, cast) for template, questions in INTRODUCTIONS[language]]
    if with_third_person:
        lines.append(_line(*THIRD_PERSON[language], cast))
    unused_events = list(EVENTS[language])
    for day in sorted(rng.sample(range(7), rng.randint(*days))):
        lines.extend(_day(rng, language, cast, day, with_third_person, unused_events))
    lines.append(_line(rng.choice(CLOSINGS[language]), (), cast))
    return lines
