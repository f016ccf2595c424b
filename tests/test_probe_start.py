"""LP-FT's start (minibert/finetune/probe_start.py): the classifier head set to the ridge probe of its own
frozen inputs scores every training example exactly as that probe does."""

import numpy as np
import pytest
from helpers import randomize
from test_finetune_batching import config, sentences, tokenizer

from minibert.errors import ConfigError
from minibert.finetune import FineTuneConfig, fine_tune
from minibert.finetune.classification import ClassificationTask
from minibert.finetune.linear_probe import fit_linear_classifier
from minibert.finetune.probe_start import start_head_from_probe
from minibert.finetune.readers import TextExample


@pytest.mark.parametrize("pair_encoder, pooling", [("cross", "cls"), ("cross", "mean"), ("bi", "cls")])
def test_the_started_head_scores_as_the_probe_of_its_inputs(pair_encoder, pooling):
    task = ClassificationTask(tokenizer(), labels=["a", "b", "c"], pair_encoder=pair_encoder)
    texts = sentences(60, 4)
    examples = [TextExample(a, b, "abc"[i % 3], f"row {i}") for i, (a, b) in enumerate(zip(texts[:30], texts[30:],
                                                                                           strict=True))]
    model_config = config()
    model_config.extra["classifier_pooling"] = pooling
    model = randomize(task.head(model_config, num_labels=3)).train()
    features = task.encode(examples)
    ridge = start_head_from_probe(task, model, features, batch_size=7)
    assert model.training  # put back as it was
    batch = task.batch(features)
    model.eval()
    inputs = model.head_inputs(batch["input_ids"], batch["segment_ids"], batch["input_mask"]).data
    weights, mean, std = fit_linear_classifier(inputs, batch["label_ids"], 3, ridge)
    probe_scores = np.hstack([(inputs - mean) / std, np.ones((len(inputs), 1))]) @ weights
    logits = model(batch["input_ids"], batch["segment_ids"], batch["input_mask"]).data
    np.testing.assert_allclose(logits, probe_scores, rtol=1e-4, atol=1e-4)


def test_the_probe_start_is_for_classifiers():
    """A regression has no labels for the probe's classes: refused in one line, before any step."""
    task = ClassificationTask(tokenizer(), regression=True)
    model = task.head(config(), num_labels=1)
    examples = [TextExample("the cat", None, 1.0, "row 1")]
    with pytest.raises(ConfigError, match="head_init 'probe'.*a regression"):
        fine_tune(task, model, examples, examples, FineTuneConfig(head_init="probe", threads=1))
    with pytest.raises(ConfigError, match="head_init"):
        FineTuneConfig(head_init="zeros")
