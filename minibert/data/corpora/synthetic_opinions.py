"""Opinion sentences: the one grammar behind the sentiment task and the opinions told in the stories.

BERT's fine-tuning works because the pretraining text already holds the language of the task (Devlin et al.
2019, section 3: the same encoder serves every task). So the sentiment sentences are not a task-only
grammar: `opinion(rng, language)` draws them, the sentiment task writes them in natural form
(`这部电影真好看`), and the stories of the corpus tell them in corpus form (`这 部 电影 真 好看`), from
the same word lists below.
"""

# Negation, double negation and contrast decide many labels (`这首歌不难听` is positive, `Although the song was
# awful, the movie was really great.` is positive), so no single word gives the label away.
#
# Chinese entries are written with a space between words (`这 家 餐厅 的 菜`, `太 咸`): these are the word
# boundaries of whole-word masking; the natural form drops them.

from minibert.data.corpora.synthetic_grammar import Word, fill

LABELS = ("negative", "positive")

# (subject, positive adjectives, negative adjectives)
SENTIMENT_SUBJECTS = {
    "zh": (("这 部 电影", ("好看", "精彩", "感人"), ("难看", "无聊", "没意思")),
           ("这 本 书", ("有趣", "精彩", "好看"), ("无聊", "枯燥", "难懂")),
           ("这 家 餐厅 的 菜", ("好吃", "新鲜", "地道"), ("难吃", "太 咸", "不 新鲜")),
           ("这 首 歌", ("好听", "动听", "感人"), ("难听", "刺耳", "无聊")),
           ("这 次 旅行", ("愉快", "难忘", "轻松"), ("糟糕", "累人", "扫兴")),
           ("这 个 手机", ("好用", "漂亮", "便宜"), ("难用", "太 慢", "太 贵"))),
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
    "zh": (("{S} {D} {ADJ}", False), ("我 觉得 {S} {D} {ADJ}", False),
           ("虽然 {OTHER} ， 但是 {S} {D} {ADJ}", False), ("{S} 不 {ADJ}", True),
           ("{S} 一点 也 不 {ADJ}", True), ("我 不 觉得 {S} {ADJ}", True),
           ("{S} 没有 想象 中 那么 {ADJ}", True)),
    "en": (("{S} was {D} {ADJ} .", False), ("I thought {S} was {D} {ADJ} .", False),
           ("Although {OTHER} , {S} was {D} {ADJ} .", False), ("{S} was not {ADJ} .", True),
           ("{S} was not {ADJ} at all .", True), ("I did not think {S} was {ADJ} .", True),
           ("{S} was never {ADJ} .", True)),
}
# A Chinese sentence ends with nothing, 。 or ！, as reviews are written.
ENDINGS_ZH = ("", "。", "！")
# Adjectives that already carry a negation (不新鲜) are not negated again: "不不新鲜" is not Chinese.
_NEGATED_ZH = ("不", "没")


def _words(text):
    return [Word(word) for word in text.split()]


def _adjective(rng, subject, positive, negatable):
    _, good, bad = subject
    choices = [adj for adj in (good if positive else bad) if not (negatable and adj.startswith(_NEGATED_ZH))]
    return _words(rng.choice(choices))


def opinion(rng, language):
    """One (words, label): the label is drawn first, then a template, then words that give that label."""
    label = rng.choice(LABELS)
    template, flips = rng.choice(SENTIMENT_TEMPLATES[language])
    subject = rng.choice(SENTIMENT_SUBJECTS[language])
    other_subject = rng.choice(SENTIMENT_SUBJECTS[language])
    positive_adjective = (label == "positive") != flips
    be = [] if language == "zh" else [Word("was")]
    other = _words(other_subject[0]) + be + _adjective(rng, other_subject, not positive_adjective, False)
    degree = Word(rng.choice(DEGREES[language]))
    words, _ = fill(template, S=_words(subject[0]), D=degree, OTHER=other,
                    ADJ=_adjective(rng, subject, positive_adjective, flips))
    if language == "zh" and (ending := rng.choice(ENDINGS_ZH)):
        words.append(Word(ending))
    first = words[0].text
    return [Word(first[0].upper() + first[1:]), *words[1:]], label
