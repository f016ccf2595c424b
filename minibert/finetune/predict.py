"""Running a fine-tuned model on new text: a label, an answer, or the entities in a sentence.

    task, model = load_finetuned("runs/sentiment")
    classify(task, model, ["这部电影真好看"])         -> [("positive", {"negative": 0.02, "positive": 0.98})]
    answer(task, model, "谁在光明公司工作？", passage) -> [Answer(text="陈静", probability=0.97, ...), ...]
    tag(task, model, "小明住在北京。")                -> (words, tags, [("小明", "PER", 0, 2), ...])
    evaluate_file(task, model, "data/synthetic/ner_dev.conll")  -> the dev metrics of that file

Texts are encoded as the training examples were (the task objects): the model sees what it was tuned on.
"""

from minibert.errors import ConfigError
from minibert.finetune.metrics import entities
from minibert.finetune.readers import QuestionExample, TextExample


def classify(task, model, texts):
    """For each text (or (text_a, text_b) pair): (best label, {label: probability}), or, for a regression,
    (number, {})."""
    _expect(task, "classification")
    pairs = [text if isinstance(text, tuple) else (text, None) for text in texts]
    examples = [TextExample(a, b, None, f"input {i + 1}") for i, (a, b) in enumerate(pairs)]
    scores = task.scores(model, task.encode(examples))
    if task.regression:
        return [(float(score), {}) for score in scores]
    return [(task.labels[int(row.argmax())], dict(zip(task.labels, map(float, row), strict=True)))
            for row in scores]


def answer(task, model, question, context):
    """The n best answers to `question` in `context`, best first (`span_decoding.Answer`)."""
    _expect(task, "question_answering")
    example = QuestionExample("input", question, context, [], "the question given")
    return task.answers(model, [example], task.encode([example]))[0]


def tag(task, model, text):
    """(words, tags, entities) of raw text; each entity is (text, type, char start, char end)."""
    _expect(task, "tagging")
    words, spans = task.split_words(text)
    if not words:
        return [], [], []
    tags = task.predict_tags(model, [task.encode_words(words)])[0]
    found = sorted(entities(tags), key=lambda entity: entity[1])
    return words, tags, [(text[spans[first][0]:spans[last][1]], kind, spans[first][0], spans[last][1])
                         for kind, first, last in found]


def evaluate_file(task, model, path):
    """The task's metrics on a labelled file in its format (TSV, SQuAD JSON or CoNLL)."""
    examples = task.read(path)
    return task.evaluate(model, examples, task.encode(examples))


def _expect(task, kind):
    if task.kind != kind:
        raise ConfigError(f"this model was fine-tuned for {task.kind.replace('_', ' ')}, not "
                          f"{kind.replace('_', ' ')}; give it the input its task takes")
