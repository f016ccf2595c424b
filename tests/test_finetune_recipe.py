"""The fine-tuning recipe's options for small pretrained models: each layer's learning rate by depth, the
head's own rate, and the pooler drawn afresh."""

import numpy as np
import pytest

from minibert.errors import ConfigError
from minibert.finetune import FineTuneConfig
from minibert.finetune.heads import BertForSequenceClassification
from minibert.finetune.loop import recipe_optimizer
from minibert.model import BertConfig
from minibert.optim.layer_decay import depth
from minibert.tokenizer import BertTokenizer
from minibert.tokenizer.vocab import SPECIAL_TOKENS


def classifier(layers=3):
    return BertForSequenceClassification(BertConfig.preset("tiny", num_hidden_layers=layers), 3, seed=0)


def rate_of_each_parameter(optimizer, scheduler):
    """The peak rate of each parameter: its group's base rate, which the schedule scales step by step."""
    return {name: rate for group, rate in zip(optimizer.param_groups, scheduler.base_lrs, strict=True)
            for name in group["names"]}


def test_each_layer_gets_decay_to_the_power_of_its_distance_from_the_top():
    """L = 3, decay 0.5: embeddings 1/16 of the rate, layers 1/8, 1/4, 1/2, pooler and classifier the full
    rate; weight decay still spares LayerNorm and biases; every parameter is in exactly one group."""
    model = classifier()
    optimizer, scheduler = recipe_optimizer(model, 1e-3, FineTuneConfig(layer_decay=0.5), total_steps=10)
    rates = rate_of_each_parameter(optimizer, scheduler)
    assert sorted(rates) == sorted(name for name, _ in model.named_parameters())
    assert rates["bert.embeddings.word_embeddings.weight"] == pytest.approx(1e-3 / 16)
    for layer, share in enumerate((1 / 8, 1 / 4, 1 / 2)):
        assert rates[f"bert.encoder.layer.{layer}.attention.self.query.weight"] == pytest.approx(1e-3 * share)
    assert rates["bert.pooler.dense.weight"] == rates["classifier.bias"] == pytest.approx(1e-3)
    decay = {name: group["weight_decay"] for group in optimizer.param_groups for name in group["names"]}
    assert decay["bert.encoder.layer.1.output.LayerNorm.weight"] == 0 and decay["classifier.bias"] == 0
    assert decay["bert.encoder.layer.1.output.dense.weight"] == 0.01


def test_the_head_rate_is_its_own_and_the_schedule_scales_every_group():
    model = classifier()
    optimizer, scheduler = recipe_optimizer(model, 1e-4, FineTuneConfig(head_lr=2e-3, warmup_proportion=0.5),
                                            total_steps=10)
    rates = rate_of_each_parameter(optimizer, scheduler)
    assert rates["classifier.weight"] == rates["bert.pooler.dense.bias"] == 2e-3
    assert rates["bert.encoder.layer.2.output.dense.weight"] == rates["bert.embeddings.LayerNorm.bias"] == 1e-4
    for _ in range(3):
        scheduler.step()
    now = {name: group["lr"] for group in optimizer.param_groups for name in group["names"]}
    assert now["classifier.weight"] > 0  # warmup: every group at the same share of its own peak rate
    assert now["classifier.weight"] / 2e-3 == pytest.approx(now["bert.embeddings.LayerNorm.bias"] / 1e-4)


def test_without_the_options_the_groups_are_berts_two():
    optimizer, _ = recipe_optimizer(classifier(), 1e-3, FineTuneConfig(), total_steps=10)
    assert [group["weight_decay"] for group in optimizer.param_groups] == [0.01, 0.0]


def test_depth_reads_the_parameter_names():
    assert [depth(name, 4) for name in ("bert.embeddings.position_embeddings.weight",
                                        "bert.encoder.layer.0.intermediate.dense.bias",
                                        "bert.encoder.layer.3.output.LayerNorm.weight",
                                        "bert.pooler.dense.weight", "qa_outputs.weight")] == [0, 1, 4, 5, 5]


def test_a_lower_layer_moves_less_in_one_step():
    """One AdamW step with decay 0.25: Adam's first step moves each entry by about its rate, so the
    embeddings move 1/256 as far as the classifier."""
    model = classifier(layers=3)
    before = {name: param.data.copy() for name, param in model.named_parameters()}
    optimizer, _ = recipe_optimizer(model, 1e-3, FineTuneConfig(layer_decay=0.25, warmup_proportion=0),
                                    total_steps=10)
    logits = model(np.array([[2, 5, 6, 3]]), np.zeros((1, 4), dtype=np.int64), np.ones((1, 4), dtype=np.int64))
    model.loss(logits, np.array([1])).backward()
    optimizer.step()
    moved = {name: np.abs(param.data - before[name]).max() for name, param in model.named_parameters()}
    ratio = moved["bert.encoder.layer.0.attention.self.key.weight"] / moved["classifier.weight"]
    assert ratio == pytest.approx(0.25 ** 3, rel=0.05)


def test_reinitialize_pooler_draws_the_pooler_alone():
    model = classifier()
    before = {name: param.data.copy() for name, param in model.named_parameters()}
    model.bert.pooler.dense.bias.data[...] = 1.0
    model.reinitialize_pooler()
    changed = [name for name, param in model.named_parameters() if not np.array_equal(param.data, before[name])]
    assert changed == ["bert.pooler.dense.weight"]  # the bias is back at 0, where BERT's initialiser puts it
    assert abs(model.bert.pooler.dense.weight.data.std() - 0.02) < 0.004


@pytest.mark.parametrize("bad", [{"layer_decay": 0}, {"layer_decay": 1.5}, {"head_lr": 0}])
def test_bad_recipe_settings_are_named(bad):
    with pytest.raises(ConfigError, match=next(iter(bad))):
        FineTuneConfig(**bad)


def test_mean_pooling_travels_with_the_saved_model(tmp_path):
    """fine_tune writes the pooling into the config, so a saved and reloaded classifier (predict's path)
    pools the same way and gives the same logits."""
    model = classifier(layers=1)
    model.config.extra["classifier_pooling"] = "mean"
    model.save_pretrained(tmp_path)
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *"abcdefg"]).save_pretrained(tmp_path)
    again = BertForSequenceClassification.from_pretrained(tmp_path, num_labels=3, verbose=False)
    assert again.config.extra["classifier_pooling"] == "mean"
    inputs = (np.array([[2, 5, 6, 3, 0]]), np.zeros((1, 5), dtype=np.int64), np.array([[1, 1, 1, 1, 0]]))
    np.testing.assert_allclose(again.eval()(*inputs).data, model.eval()(*inputs).data, rtol=1e-6)
    with pytest.raises(ConfigError, match="pooling"):
        FineTuneConfig(pooling="max")
