"""The fine-tuning heads (minibert/finetune/heads.py): gradients against finite differences, losses against
formulas written out in NumPy, and loading an encoder with a fresh or a saved head."""

import numpy as np
import pytest
from helpers import randomize

from minibert import gradcheck
from minibert.errors import CheckpointError, ShapeError
from minibert.finetune.heads import (
    IGNORE_INDEX,
    BertForPairClassification,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import SPECIAL_TOKENS


def tiny_config(**overrides):
    """Odd sizes, so a transposed weight or a swapped axis fails loudly rather than broadcasting."""
    values = dict(vocab_size=17, hidden_size=6, num_hidden_layers=1, num_attention_heads=2,
                  intermediate_size=5, max_position_embeddings=8)
    return BertConfig(**{**values, **overrides})


def padded_batch(seed=0):
    """Three rows of lengths 6, 4 and 2, two segments, padding after."""
    rng = np.random.default_rng(seed)
    lengths = np.array([6, 4, 2])
    attention_mask = (np.arange(6) < lengths[:, None]).astype(np.int64)
    input_ids = rng.integers(1, 17, size=(3, 6)) * attention_mask
    token_type_ids = (np.arange(6) >= lengths[:, None] // 2).astype(np.int64) * attention_mask
    return input_ids, token_type_ids, attention_mask




def log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


HEADS = {
    "classification": (lambda c: BertForSequenceClassification(c, num_labels=3),
                       lambda model, out: model.loss(out, np.array([2, 0, 1]))),
    "classification, mean pooling": (
        lambda c: BertForSequenceClassification(BertConfig.from_dict({**c.to_dict(), "classifier_pooling": "mean"}), 3),
        lambda model, out: model.loss(out, np.array([2, 0, 1]))),
    "regression": (lambda c: BertForSequenceClassification(c, num_labels=1),
                   lambda model, out: model.loss(out, np.array([0.5, -1.0, 2.0]))),
    "question_answering": (lambda c: BertForQuestionAnswering(c),
                           lambda model, out: model.loss(*out, np.array([3, 0, 1]), np.array([4, 0, 1]))),
    "tagging": (lambda c: BertForTokenClassification(c, num_labels=4),
                lambda model, out: model.loss(out, np.array([[-100, 1, 3, -100, 0, -100],
                                                             [-100, 2, 2, -100, -100, -100],
                                                             [-100, 0, -100, -100, -100, -100]]))),
}


@pytest.mark.parametrize("head", list(HEADS))
def test_head_gradcheck(backend, head):
    """d(task loss)/d(every parameter, encoder and head) against finite differences in float64, in training
    mode with the dropout draws replayed, on a padded batch, on both backends. Tensors are sampled (20
    entries each)."""
    build, task_loss = HEADS[head]
    model = randomize(build(tiny_config(hidden_dropout_prob=0.2)).to(np.float64)).train()
    ids, types, mask = padded_batch()
    dropout_state = model.rng.bit_generator.state
    names, params = zip(*model.named_parameters(), strict=True)

    def loss(*_):
        model.rng.bit_generator.state = dropout_state  # the same dropout masks at every evaluation
        return task_loss(model, model(ids, types, mask))

    assert gradcheck(loss, *params, names=names, max_entries=20)


def test_mean_pooling_averages_the_real_tokens_only():
    """With classifier_pooling "mean", the logits are the classifier of the mean of the real tokens' final
    vectors (eval mode): padding changes nothing, and the pooler is not read."""
    config = BertConfig.from_dict({**tiny_config().to_dict(), "classifier_pooling": "mean"})
    model = randomize(BertForSequenceClassification(config, num_labels=3)).eval()
    ids, types, mask = padded_batch()
    sequence = model.bert(ids, types, mask).sequence_output.data
    expected = np.stack([sequence[row, :length].mean(axis=0) for row, length in enumerate(mask.sum(axis=1))])
    expected = expected @ model.classifier.weight.data.T + model.classifier.bias.data
    np.testing.assert_allclose(model(ids, types, mask).data, expected, rtol=1e-5, atol=1e-6)
    model.bert.pooler.dense.weight.data[...] = 0  # not read
    np.testing.assert_allclose(model(ids, types, mask).data, expected, rtol=1e-5, atol=1e-6)


def pair_batch():
    """(2, 3, 6) inputs of a bi-encoder: three A texts, then three B texts of other lengths; one segment."""
    (ids_a, _, mask_a), (ids_b, _, mask_b) = padded_batch(0), padded_batch(1)
    mask = np.stack([mask_a, mask_b[::-1]])  # B's lengths 2, 4, 6 against A's 6, 4, 2
    ids = np.stack([ids_a, np.where(mask[1], ids_b + 1, 0)]) % 17
    return ids, np.zeros_like(ids), mask


def test_pair_head_gradcheck(backend):
    """The bi-encoder's loss through [u, v, |u - v|, u * v], d/d(every parameter) against finite differences
    in float64, dropout replayed, on both backends."""
    model = randomize(BertForPairClassification(tiny_config(hidden_dropout_prob=0.2), 3).to(np.float64)).train()
    ids, types, mask = pair_batch()
    dropout_state = model.rng.bit_generator.state
    names, params = zip(*model.named_parameters(), strict=True)

    def loss(*_):
        model.rng.bit_generator.state = dropout_state
        return model.loss(model(ids, types, mask), np.array([2, 0, 1]))

    assert gradcheck(loss, *params, names=names, max_entries=20)


def test_pair_head_reads_each_text_alone():
    """Each text is encoded alone: its vector is the mean of its real tokens' final vectors when it is run by
    itself, unpadded; the logits are the classifier of [u, v, |u - v|, u * v], and the pooler is not read."""
    model = randomize(BertForPairClassification(tiny_config(), num_labels=3)).eval()
    ids, types, mask = pair_batch()

    def alone(side, row):
        length = mask[side, row].sum()
        single = ids[side, row:row + 1, :length]
        return model.bert(single, np.zeros_like(single), np.ones_like(single)).sequence_output.data[0].mean(axis=0)

    u, v = (np.stack([alone(side, row) for row in range(3)]) for side in (0, 1))
    features = np.hstack([u, v, np.abs(u - v), u * v])
    expected = features @ model.classifier.weight.data.T + model.classifier.bias.data
    np.testing.assert_allclose(model(ids, types, mask).data, expected, rtol=1e-4, atol=1e-5)
    model.bert.pooler.dense.weight.data[...] = 0  # not read
    np.testing.assert_allclose(model(ids, types, mask).data, expected, rtol=1e-4, atol=1e-5)
    with pytest.raises(ShapeError, match=r"\(2, B, S\)"):
        model(ids[0], types[0], mask[0])


def test_classification_and_regression_losses_by_formula():
    """Cross-entropy = mean of -log softmax at the label; with num_labels=1, the mean squared error."""
    ids, types, mask = padded_batch()
    model = randomize(BertForSequenceClassification(tiny_config(), num_labels=3)).eval()
    logits = model(ids, types, mask)
    labels = np.array([2, 0, 1])
    expected = -log_softmax(logits.data.astype(np.float64))[np.arange(3), labels].mean()
    assert model.loss(logits, labels).item() == pytest.approx(expected, rel=1e-5)
    regression = randomize(BertForSequenceClassification(tiny_config(), num_labels=1)).eval()
    scores = regression(ids, types, mask)
    targets = np.array([0.5, -1.0, 2.0])
    assert scores.shape == (3, 1)
    expected = np.mean((scores.data[:, 0] - targets) ** 2)
    assert regression.loss(scores, targets).item() == pytest.approx(expected, rel=1e-5)


def test_question_answering_loss_is_the_mean_of_start_and_end():
    """loss = (CE(start logits, start) + CE(end logits, end)) / 2, each over the S positions."""
    ids, types, mask = padded_batch()
    model = randomize(BertForQuestionAnswering(tiny_config())).eval()
    start_logits, end_logits = model(ids, types, mask)
    assert start_logits.shape == end_logits.shape == (3, 6)
    starts, ends = np.array([3, 0, 1]), np.array([4, 0, 1])
    rows = np.arange(3)
    start_ce = -log_softmax(start_logits.data.astype(np.float64))[rows, starts].mean()
    end_ce = -log_softmax(end_logits.data.astype(np.float64))[rows, ends].mean()
    assert model.loss(start_logits, end_logits, starts, ends).item() == pytest.approx((start_ce + end_ce) / 2,
                                                                                      rel=1e-5)


def test_tagging_loss_ignores_continuation_pieces_and_padding():
    """Only positions with a label count: the loss is the mean over them, whatever the other logits are."""
    ids, types, mask = padded_batch()
    model = randomize(BertForTokenClassification(tiny_config(), num_labels=4)).eval()
    logits = model(ids, types, mask)
    labels = np.full((3, 6), IGNORE_INDEX)
    labels[0, 1], labels[0, 4], labels[1, 2] = 3, 0, 1
    counted = labels != IGNORE_INDEX
    expected = -log_softmax(logits.data.astype(np.float64))[counted, labels[counted]].mean()
    assert model.loss(logits, labels).item() == pytest.approx(expected, rel=1e-5)


def save_pretraining_folder(folder, config):
    """A from_pretrained folder of a random BertForPreTraining, with a vocabulary of the config's size."""
    model = randomize(BertForPreTraining(config), seed=3)
    model.save_pretrained(folder)
    tokens = list(SPECIAL_TOKENS) + [f"w{i}" for i in range(config.vocab_size - len(SPECIAL_TOKENS))]
    (folder / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return model


@pytest.mark.parametrize("head", [BertForSequenceClassification, BertForQuestionAnswering,
                                  BertForTokenClassification])
def test_from_pretrained_loads_the_encoder_and_starts_the_head_fresh(tmp_path, head):
    """Every encoder weight comes from the folder; the head is BERT-initialised (bias 0, small weights)."""
    pretrained = save_pretraining_folder(tmp_path, tiny_config())
    model = head.from_pretrained(tmp_path, num_labels=3, verbose=False)
    for name, array in model.bert.state_dict().items():
        np.testing.assert_array_equal(array, pretrained.bert.state_dict()[name], err_msg=name)
    new_layer = getattr(model, head.head_name)
    assert not new_layer.bias.data.any()
    assert 0 < np.abs(new_layer.weight.data).max() < 0.2  # N(0, 0.02), far from the randomized weights
    assert model.vocab_file == str(tmp_path / "vocab.txt")


def test_a_fine_tuned_head_is_loaded_with_its_labels(tmp_path):
    """A saved fine-tuned model comes back whole (head and label names); another head's class starts fresh."""
    save_pretraining_folder(tmp_path / "pre", tiny_config())
    model = BertForSequenceClassification.from_pretrained(tmp_path / "pre", labels=["neg", "pos"],
                                                          verbose=False)
    randomize(model, seed=7).save_pretrained(tmp_path / "tuned")
    (tmp_path / "tuned" / "vocab.txt").write_bytes((tmp_path / "pre" / "vocab.txt").read_bytes())
    again = BertForSequenceClassification.from_pretrained(tmp_path / "tuned", verbose=False)
    assert again.labels == ["neg", "pos"] and again.num_labels == 2
    np.testing.assert_array_equal(again.classifier.weight.data, model.classifier.weight.data)
    tagger = BertForTokenClassification.from_pretrained(tmp_path / "tuned", verbose=False)
    assert not tagger.classifier.bias.data.any()  # a sequence classifier's head is not a tagger's


def test_missing_encoder_weights_are_refused(tmp_path):
    """A folder whose file lacks encoder layers is not silently half-loaded."""
    save_pretraining_folder(tmp_path, tiny_config(num_hidden_layers=1))
    config_path = tmp_path / "config.json"
    two_layers = config_path.read_text().replace('"num_hidden_layers": 1', '"num_hidden_layers": 2')
    config_path.write_text(two_layers)
    with pytest.raises(CheckpointError, match="lacks 16 encoder weights"):
        BertForQuestionAnswering.from_pretrained(tmp_path, verbose=False)
