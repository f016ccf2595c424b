"""The small bilingual grammar behind the `synthetic` corpus: its words, its templates, how text is rendered.

The point of this grammar is the example of the course's article (docs/background.md), `小明 给 小红 ___ 一 本 书`: some
words can only be predicted from their **right** context. A `RightContextFamily` is a set of blank words, each fixed by
the noun that follows it (a measure word by its noun: 一 本 书, 一 杯 茶; a verb by its object: 喝 茶, 开 车; in English
"a cup of tea", "drive the car"). Its sentences are built so that the left context carries no information about the
blank, so a left-to-right model is at chance and a bidirectional one is exact (how, below).
"""

# 1. the template, the people and the numeral are drawn first, without looking at the blank;
# 2. then the blank word is drawn uniformly from the family, and its noun uniformly from that word's nouns.
#
# So P(blank | everything to its left) is uniform over the family: a left-to-right (causal) model is at
# chance, 1/len(choices), while a bidirectional one reads the noun on the right and is exact.
#
# Words and rendering. A sentence is a list of `Word`s. Chinese is written with a single space between
# words, punctuation included (`小明 给 小红 买 了 一 本 书 。`): BERT's tokenizer splits CJK text into single
# characters either way, so the spaces change no token, but they tell whole-word masking where a Chinese
# word begins and ends (google-research/bert #780). English is ordinary text ("Tom gave Mary a cup of tea.").
# The fine-tuning sets use the natural form, with no spaces inside Chinese (`这部电影真好看`).

from dataclasses import dataclass

# One-character punctuation words: in English they attach to the word before them.
PUNCTUATION = frozenset("。，？！：.,?!:")


@dataclass(frozen=True)
class Word:
    """One word of a generated sentence.

    entity: "PER", "LOC" or "ORG" for the tagging task, else None.
    family: the name of the RightContextFamily this word is the blank of, else None.
    """

    text: str
    entity: str | None = None
    family: str | None = None


@dataclass(frozen=True)
class RightContextFamily:
    """Blank words each fixed by the noun after them; the templates keep the left context uninformative.

    nouns: {blank word: the nouns that select it}. No noun appears under two blank words.
    templates: sentences with the slots {BLANK} and {NOUN} (and {A}, {B}, {NUM}, {DAY}, drawn first).
    """

    name: str
    language: str
    nouns: dict
    templates: tuple

    @property
    def choices(self):
        return tuple(self.nouns)

    def word_for_noun(self, noun):
        """The one blank word a noun selects (the right-context rule, stated as a function)."""
        for word, nouns in self.nouns.items():
            if noun in nouns:
                return word
        raise KeyError(f"{noun!r} is not a noun of family {self.name}")


SYNTHETIC_RIGHT_CONTEXT = {
    family.name: family for family in (
        RightContextFamily("zh_measure_word", "zh", {
            "本": ("书", "杂志", "词典"), "只": ("猫", "狗", "小鸟"), "杯": ("茶", "咖啡", "牛奶"),
            "辆": ("汽车", "自行车", "卡车"), "把": ("雨伞", "椅子", "钥匙"), "条": ("鱼", "裙子", "围巾"),
            "张": ("纸", "照片", "地图"),
        }, (
            "{A} 给 {B} 买 了 {NUM} {BLANK} {NOUN} 。",
            "{A} 送 给 {B} {NUM} {BLANK} {NOUN} 。",
            "{DAY} ， {B} 看到 了 {NUM} {BLANK} {NOUN} 。",
            "{A} 的 家 里 有 {NUM} {BLANK} {NOUN} 。",
        )),
        RightContextFamily("zh_verb", "zh", {
            "喝": ("茶", "咖啡", "果汁"), "吃": ("米饭", "面条", "饺子"), "读": ("小说", "报纸", "诗歌"),
            "开": ("汽车", "卡车", "飞机"), "弹": ("钢琴", "吉他", "古筝"), "踢": ("足球", "毽子", "皮球"),
        }, (
            "{A} 喜欢 {BLANK} {NOUN} 。",
            "{A} 每天 都 {BLANK} {NOUN} 。",
            "{A} 和 {B} 一起 {BLANK} {NOUN} 。",
            "{DAY} ， {B} 想 {BLANK} {NOUN} 。",
        )),
        RightContextFamily("en_measure_word", "en", {
            "cup": ("tea", "coffee", "cocoa"), "glass": ("water", "juice", "milk"), "loaf": ("bread", "rye"),
            "bowl": ("soup", "rice", "noodles"), "slice": ("cake", "pizza", "cheese"),
            "bar": ("chocolate", "soap"),
        }, (
            "{A} gave {B} a {BLANK} of {NOUN} .",
            "{A} bought a {BLANK} of {NOUN} for {B} .",
            "On {DAY} , {B} found a {BLANK} of {NOUN} .",
            "{B} asked {A} for a {BLANK} of {NOUN} .",
        )),
        RightContextFamily("en_verb", "en", {
            "drink": ("lemonade", "tea", "juice"), "eat": ("apples", "bread", "noodles"),
            "read": ("newspaper", "novel", "letter"), "drive": ("car", "truck", "bus"),
            "play": ("piano", "guitar", "violin"), "wear": ("coat", "scarf", "hat"),
        }, (
            "{A} wanted to {BLANK} the {NOUN} .",
            "{A} and {B} decided to {BLANK} the {NOUN} .",
            "On {DAY} , {B} tried to {BLANK} the {NOUN} .",
            "{B} did not want to {BLANK} the {NOUN} .",
        )),
    )
}

# The people, places and organisations the stories are about (entities for the tagging task).
NAMES = {
    "zh": ("小明", "小红", "小刚", "小丽", "小华", "小芳", "小军", "小燕", "小东", "小梅", "小强", "小雪",
           "张伟", "李娜", "王芳", "刘洋", "陈静", "杨帆", "赵磊", "黄蕾", "周杰", "吴敏", "徐亮", "孙悦"),
    "en": ("Tom", "Mary", "Alice", "Bob", "Lucy", "Jack", "Emma", "Noah", "Olivia", "Liam", "Sophia", "Mason",
           "Ava", "Ethan", "Mia", "Lily", "Henry", "Grace", "Oscar", "Ruby", "Leo", "Chloe", "Sam", "Anna"),
}
SURNAMES_EN = ("Smith", "Jones", "Brown", "Taylor", "Wilson", "Clark", "Walker", "Hall", "Young", "King")
CITIES = {
    "zh": ("北京", "上海", "广州", "深圳", "杭州", "南京", "成都", "西安", "武汉", "重庆", "天津", "苏州"),
    "en": ("London", "Paris", "Boston", "Chicago", "Berlin", "Sydney", "Toronto", "Dublin", "New York",
           "San Francisco", "Hong Kong", "Cape Town"),
}
# An organisation is a city's institution (北京大学, Boston Library) or one of a few named firms.
ORGANISATION_KINDS = {
    "zh": ("银行", "大学", "医院", "中学", "图书馆", "博物馆"),
    "en": ("Bank", "University", "Hospital", "Library", "Museum", "Theatre"),
}
FIRMS = {
    "zh": ("光明公司", "东方集团", "阳光小学", "新华书店", "长城饭店"),
    "en": ("Acme Corporation", "Northwind Trading", "Blue Sky Airlines", "Maple Bakery", "Sunrise Studio"),
}
# Places that are not entities: "the library" is a place, "Boston Library" an organisation.
PLACES = {
    "zh": ("公园", "图书馆", "博物馆", "商店", "电影院", "海边", "动物园", "超市", "咖啡馆", "山上"),
    "en": ("the park", "the library", "the museum", "the market", "the cinema", "the beach", "the zoo",
           "the station", "the garden", "the lake"),
}
DAYS = {
    "zh": ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
}
NUMERALS_ZH = ("一", "两", "三")


def fill(template, **slots):
    """Fill a template such as "{A} 和 {B} 是 好 朋友 。"; each slot is a Word or a list of Words.

    Returns (words, positions) where positions[slot] = (first word index, last word index + 1), which the
    question-answering task uses to find its answer spans.
    """
    words, positions = [], {}
    for token in template.split():
        if token.startswith("{") and token.endswith("}"):
            value = slots[token[1:-1]]
            value = value if isinstance(value, list) else [value]
            positions[token[1:-1]] = (len(words), len(words) + len(value))
            words.extend(value)
        else:
            words.append(Word(token))
    return words, positions


def render(sentences, language, spaced=True):
    """Join sentences (lists of Words) into one text; return (text, spans) with spans[i][j] = (start, end).

    spaced=True is the corpus form (a space between all Chinese words); spaced=False the natural form
    (no spaces inside Chinese). English is the same either way: spaces between words, none before
    punctuation. Offsets are Python string indices, end exclusive.
    """
    pieces, spans, position = [], [], 0
    for sentence in sentences:
        sentence_spans = []
        for word in sentence:
            if position > 0 and (spaced if language == "zh" else word.text not in PUNCTUATION):
                pieces.append(" ")
                position += 1
            pieces.append(word.text)
            sentence_spans.append((position, position + len(word.text)))
            position += len(word.text)
        spans.append(sentence_spans)
    return "".join(pieces), spans


def right_context_sentence(rng, family, a, b, day):
    """A sentence of `family` about people a, b (Words) on `day` (Word), left context drawn before the blank.

    The draws happen in the order given at the top of this module, so the blank is independent of its left.
    """
    template = rng.choice(family.templates)
    numeral = Word(rng.choice(NUMERALS_ZH))
    blank = rng.choice(family.choices)
    noun = rng.choice(family.nouns[blank])
    blank = Word(blank, family=family.name)
    words, _ = fill(template, A=a, B=b, DAY=day, NUM=numeral, BLANK=blank, NOUN=Word(noun))
    return words
