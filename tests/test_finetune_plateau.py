"""A fine-tuning run that learns nothing says so (minibert/finetune/plateau.py), and the default number of
epochs gives a small training set enough steps to leave the plateau at chance."""

import json

import pytest

from minibert.errors import ConfigError
from minibert.finetune import FineTuneConfig
from minibert.finetune.classification import ClassificationTask
from minibert.finetune.finetuning_run import run_finetuning
from minibert.finetune.loop import FineTuneResult
from minibert.finetune.plateau import MAX_EPOCHS, MIN_STEPS, at_chance, default_epochs, plateau_warning
from minibert.finetune.question_answering import QuestionAnsweringTask
from minibert.finetune.readers import TextExample
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import BertTokenizer

SYNTHETIC = "data/synthetic"


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer(f"{SYNTHETIC}/vocab.txt")


def labelled(*labels):
    return [TextExample(f"sentence {i}", None, label, "hand-made") for i, label in enumerate(labels)]


@pytest.mark.parametrize("steps_per_epoch, epochs", [(63, 8), (167, 3), (166, 4), (750, 3), (10, 20), (1, 20)])
def test_default_epochs_reach_the_minimum_steps_within_the_cap(steps_per_epoch, epochs):
    """3 epochs (the paper's) when they already give MIN_STEPS steps; more when not, up to MAX_EPOCHS."""
    assert (MIN_STEPS, MAX_EPOCHS) == (500, 20)
    assert default_epochs(steps_per_epoch) == epochs


def test_chance_is_the_most_common_label(tokenizer):
    task = ClassificationTask(tokenizer)
    assert task.chance(labelled("b", "a", "b", "b")) == (0.75, "always answering 'b'")
    assert task.chance(labelled("b", "a")) == (0.5, "always answering 'a'")  # a tie: the first by name
    assert ClassificationTask(tokenizer, regression=True).chance(labelled(1.0, 2.0)) == (0.0, "no correlation")


@pytest.mark.parametrize("accuracy, expected", [(0.508, True), (0.544, True), (0.546, False), (0.9, False)])
def test_at_chance_allows_two_standard_errors(tokenizer, accuracy, expected):
    """500 dev examples, half of each label: two standard errors of a coin are 4.5 points."""
    task = ClassificationTask(tokenizer)
    assert at_chance(task, labelled(*["x", "y"] * 250), {"accuracy": accuracy}) is expected


def result_with(accuracy=None, losses=(0.69, 0.69)):
    history = [{"epoch": i + 1, "train_loss": loss, "dev": {}} for i, loss in enumerate(losses)]
    return FineTuneResult({} if accuracy is None else {"accuracy": accuracy}, 1, history)


def test_warning_names_the_chance_score_and_what_to_try(tokenizer):
    task = ClassificationTask(tokenizer)
    dev = labelled(*["x", "y", "y"] * 100)
    warning = plateau_warning(task, dev, result_with(0.67), 1e-3, [0.69])
    assert "0.6700" in warning and "always answering 'y' (0.6667)" in warning
    assert "more epochs (this run: 2)" in warning and "learning rate (this run: 0.001)" in warning
    assert plateau_warning(task, dev, result_with(0.8), 1e-3, [0.69]) is None


def test_a_run_that_memorised_its_examples_is_not_told_to_train_longer(tokenizer):
    """Dev at chance while the training loss fell (random weights on 200 sentence pairs: 0.69 to 0.002): more
    epochs would fit the examples further, so the warning says what it saw and does not advise them. The epochs
    it names are the run's, not its evaluations' count."""
    task = ClassificationTask(tokenizer)
    dev = labelled(*["x", "y"] * 100)
    history = [{"epoch": epoch, "train_loss": loss, "dev": {}} for epoch, loss in ((4, 0.69), (72, 0.002))]
    warning = plateau_warning(task, dev, FineTuneResult({"accuracy": 0.57}, 4, history), 1e-4, [0.70, 0.69])
    assert "no better than always answering 'x' (0.5000)" in warning and "fell to 0.0020" in warning
    assert "fit its training examples" in warning and "Try more epochs" not in warning
    assert "(this run: 72)" in warning
    flat = [{"epoch": epoch, "train_loss": 0.69, "dev": {}} for epoch in (4, 72)]
    on_plateau = plateau_warning(task, dev, FineTuneResult({"accuracy": 0.57}, 4, flat), 1e-4, [0.70, 0.69])
    assert "Try more epochs (this run: 72)" in on_plateau and "fit its training" not in on_plateau


def test_a_task_without_a_chance_score_is_judged_by_its_loss(tokenizer):
    """Question answering has no fixed guess to compare with: a flat training loss is the sign."""
    task = QuestionAnsweringTask(tokenizer)
    flat, fell = result_with(losses=(5.5, 5.4)), result_with(losses=(5.5, 2.0))
    assert "did not fall (5.4000" in plateau_warning(task, [], flat, 1e-3, [5.6, 5.5])
    assert plateau_warning(task, [], fell, 1e-3, [5.6, 5.5]) is None


def test_a_run_left_at_chance_warns_and_records_it(tokenizer, tmp_path):
    """One epoch of 64 sentences cannot leave the plateau: the run says so and finetune.json keeps it."""
    BertModel(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size)).save_pretrained(tmp_path / "random")
    tokenizer.save_pretrained(tmp_path / "random")
    settings = FineTuneConfig(epochs=1, seed=0)
    _, _, result = run_finetuning("sentiment", tmp_path / "random", tmp_path / "out", settings=settings,
                                  random_init=True, log=None, train_limit=64, dev_limit=100)
    assert result.warning and "no better than always answering" in result.warning
    assert json.loads((tmp_path / "out" / "finetune.json").read_text())["warning"] == result.warning


def test_a_long_run_evaluates_every_few_epochs_and_after_the_last(tokenizer, tmp_path):
    """evaluations=2 over 5 epochs: dev is read after epochs 3 and 5 only, and the kept epoch is one of them
    (a tiny set given the plateau's steps runs for hundreds of short epochs)."""
    BertModel(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size)).save_pretrained(tmp_path / "random")
    tokenizer.save_pretrained(tmp_path / "random")
    settings = FineTuneConfig(epochs=5, evaluations=2, seed=0)
    _, _, result = run_finetuning("sentiment", tmp_path / "random", settings=settings, random_init=True, log=None,
                                  train_limit=32, dev_limit=20)
    assert [entry["epoch"] for entry in result.history] == [3, 5] and result.best_epoch in (3, 5)
    with pytest.raises(ConfigError, match="evaluations=0 must be a whole number >= 1"):
        FineTuneConfig(evaluations=0)
