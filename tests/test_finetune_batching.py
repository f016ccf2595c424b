"""Evaluation batches (minibert/finetune/batching.py): every head scores its dev features shortest first, so
that each batch pads little, and must still give each feature what it gets when run alone."""

import numpy as np
import pytest
from helpers import randomize

from minibert.finetune.classification import ClassificationTask
from minibert.finetune.question_answering import QuestionAnsweringTask
from minibert.finetune.readers import QuestionExample, TaggedSentence, TextExample
from minibert.finetune.tagging import TaggingTask
from minibert.model import BertConfig
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "big", "red"]


def tokenizer():
    return BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *WORDS])


def config():
    return BertConfig(vocab_size=len(SPECIAL_TOKENS) + len(WORDS), hidden_size=8, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=12, max_position_embeddings=64)


def sentences(count, seed):
    """Sentences of 1 to 20 words, in no order of length, so that batches taken shortest first differ from
    batches taken in the given order."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=rng.integers(1, 21))) for _ in range(count)]


@pytest.mark.parametrize("pair_encoder", ["cross", "bi"])
def test_classification_scores_each_example_as_alone(pair_encoder):
    task = ClassificationTask(tokenizer(), labels=["no", "yes"], pair_encoder=pair_encoder)
    texts = sentences(14, 0)
    examples = [TextExample(a, b, None, f"row {i}") for i, (a, b) in enumerate(zip(texts[:7], texts[7:], strict=True))]
    model = randomize(task.head(config(), num_labels=2))
    features = task.encode(examples)
    alone = np.concatenate([task.scores(model, [feature], batch_size=1) for feature in features])
    np.testing.assert_allclose(task.scores(model, features, batch_size=3), alone, rtol=1e-5, atol=1e-6)


def test_tagging_tags_each_sentence_as_alone():
    task = TaggingTask(tokenizer(), labels=["O", "B-X", "I-X"])
    model = randomize(task.head(config(), num_labels=3))
    features = task.encode([TaggedSentence(text.split(), None, "dev.conll", i + 1)
                            for i, text in enumerate(sentences(9, 1))])
    alone = [task.predict_tags(model, [feature], batch_size=1)[0] for feature in features]
    assert task.predict_tags(model, features, batch_size=4) == alone


def test_question_answering_answers_each_question_as_alone():
    task = QuestionAnsweringTask(tokenizer(), max_seq_length=24, doc_stride=8, max_answer_length=5)
    examples = [QuestionExample(f"q{i}", question, context, [], f"question {i}")
                for i, (question, context) in enumerate(zip(sentences(5, 2), sentences(5, 3), strict=True))]
    model = randomize(task.head(config()))
    windows = task.encode(examples)
    alone = [task.answers(model, [example], task.encode([example]), batch_size=1)[0] for example in examples]
    together = task.answers(model, examples, windows, batch_size=3)
    assert [[answer.text for answer in answers] for answers in together] == [
        [answer.text for answer in answers] for answers in alone]
    for answers, expected in zip(together, alone, strict=True):
        assert [answer.probability for answer in answers] == pytest.approx(
            [answer.probability for answer in expected], rel=1e-4, abs=1e-6)
