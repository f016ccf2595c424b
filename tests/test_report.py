"""The run reports (minibert/train/report.py, minibert/finetune/report.py), read without a browser: what
report.json holds after a short pretraining and fine-tuning run, that a resumed run's report follows it,
and that a failed rewrite leaves the previous page whole. tests/test_pages_in_browser.py opens the pages."""

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import quiet, small_config

from minibert.errors import CheckpointError
from minibert.finetune import FineTuneConfig, fine_tune
from minibert.finetune.classification import ClassificationTask
from minibert.finetune.heads import BertForSequenceClassification
from minibert.finetune.readers import TextExample
from minibert.model import BertConfig
from minibert.tokenizer import BertTokenizer
from minibert.tokenizer.vocab import SPECIAL_TOKENS
from minibert.train import pretrain, pretraining_loop, report
from minibert.train.logs import read_log
from minibert.train.report import REPORT_DATA, REPORT_PAGE, unigram_baseline
from minibert.train.update import TrainingDiverged


def report_of(folder):
    return json.loads((folder / REPORT_DATA).read_text("utf-8"))


@pytest.fixture(scope="module")
def paused_and_resumed(small_corpus, tmp_path_factory):
    """A 6-step run evaluated every 2 steps, paused after 4 steps, then resumed to the end."""
    folder = tmp_path_factory.mktemp("report") / "run"
    config = small_config(small_corpus, steps=6, eval_every=2)
    pretrain(config, folder, data_dir=small_corpus.parent, stop_after_steps=4, **quiet())
    paused = report_of(folder)
    pretrain(None, folder, resume=True, data_dir=small_corpus.parent, **quiet())
    return folder, paused


def test_the_pretraining_report_holds_the_log_s_figures_and_the_guesses(paused_and_resumed):
    folder, _ = paused_and_resumed
    report, records = report_of(folder), read_log(folder / "log.jsonl")
    evals = [record for record in records if record["kind"] == "eval"]
    assert [row["step"] for row in report["eval"]] == [record["step"] for record in evals] == [2, 4, 6]
    assert [row["mlm_accuracy"] for row in report["eval"]] == [record["mlm_accuracy"] for record in evals]
    assert [row["step"] for row in report["train"]] == [record["step"] for record in records
                                                         if record["kind"] == "train"]
    assert [entry["step"] for entry in report["guesses"]] == [2, 4, 6]
    first = report["guesses"][0]["examples"]
    assert first and all(example["text"].count("[MASK]") == len(example["blanks"]) for example in first)
    assert [example["text"] for example in report["guesses"][-1]["examples"]] == [e["text"] for e in first]
    assert 0 < report["unigram"]["accuracy"] < 1 and report["unigram"]["loss"] > 0
    assert report["config"]["steps"] == 6 and report["run"]["parameters"] > 0


def test_a_paused_run_s_report_says_so_and_the_resumed_one_adds_its_session(paused_and_resumed):
    folder, paused = paused_and_resumed
    assert paused["run"]["status"] == "paused" and paused["run"]["step"] == 4
    report = report_of(folder)
    assert report["run"]["status"] == "finished" and report["run"]["ended"] is not None
    assert [session["kind"] for session in report["run"]["sessions"]] == ["start", "resume"]
    assert all(session["time"].endswith("Z") and session["command"] for session in report["run"]["sessions"])
    assert (folder / REPORT_PAGE).read_text("utf-8").count("\"kind\":\"pretrain\"") == 1


def test_the_unigram_baseline_is_the_most_common_blank_and_the_entropy():
    """Blanks 5, 5, 7 (a fourth slot is padding): always guessing 5 is right 2 times in 3, and a model of
    the frequencies alone loses the entropy of (2/3, 1/3)."""
    tokenizer = BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, "a", "b", "c", "d", "e"])
    batch = {"masked_lm_ids": np.array([[5, 5], [7, 9]]), "masked_lm_weights": np.array([[1.0, 1.0], [1.0, 0.0]])}
    baseline = unigram_baseline([batch], tokenizer)
    assert baseline["token"] == tokenizer.ids_to_tokens[5]
    assert baseline["accuracy"] == pytest.approx(2 / 3)
    assert baseline["loss"] == pytest.approx(-(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3)))


def test_a_failed_rewrite_leaves_the_last_page_whole_and_the_next_clears_a_killed_one(paused_and_resumed, monkeypatch):
    folder, _ = paused_and_resumed
    before = (folder / REPORT_PAGE).read_bytes()

    def broken(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report, "html_page", broken)
    with pytest.raises(CheckpointError, match="the previous report.html, if any, is unchanged"):
        report.write_pretrain_report(folder, read_log(folder / "log.jsonl"))
    assert (folder / REPORT_PAGE).read_bytes() == before
    assert not [path for path in folder.iterdir() if path.name.endswith(".tmp")]
    monkeypatch.undo()
    (folder / f".{REPORT_PAGE}.0123456789ab.tmp").write_text("<html><body>half")  # a killed writer's
    report.write_pretrain_report(folder, read_log(folder / "log.jsonl"))
    assert not [path for path in folder.iterdir() if path.name.endswith(".tmp")]


WORDS = ["good", "bad", "fine", "awful", "film"]


def toy_fine_tuning(folder):
    """(task, model, examples) of a two-label toy task, small enough for a fine-tuning run in a second."""
    tokenizer = BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *WORDS])
    examples = [TextExample(f"{word} film", None, "pos" if word in ("good", "fine") else "neg", f"x:{i}")
                for i, word in enumerate(WORDS[:4] * 5)]
    task = ClassificationTask(tokenizer, max_seq_length=8)
    task.fit_labels(examples)
    model = BertForSequenceClassification(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size), 2)
    tokenizer.save_pretrained(folder / "vocabulary")
    model.vocab_file = str(folder / "vocabulary" / "vocab.txt")
    return task, model, examples


def test_the_fine_tuning_report_counts_every_dev_example_once(tmp_path):
    """The confusion matrix adds up to the dev set and its diagonal to the dev accuracy; every example shown
    as a mistake is one; the epochs are the run's."""
    task, model, examples = toy_fine_tuning(tmp_path)
    out = tmp_path / "tuned"
    result = fine_tune(task, model, examples, examples[:8], FineTuneConfig(epochs=2, batch_size=4, plain=True),
                       out_dir=out, stream=io.StringIO(), record={"task": "toy"})
    report = report_of(out)
    counts = np.array(report["confusion"]["counts"])
    assert counts.sum() == 8 and report["confusion"]["labels"] == ["neg", "pos"]
    assert np.trace(counts) / 8 == pytest.approx(result.best_metrics["accuracy"])
    assert len(report["mistakes"]) == 8 - np.trace(counts)
    assert all(mistake["label"] != mistake["predicted"] for mistake in report["mistakes"])
    assert [entry["epoch"] for entry in report["epochs"]] == [1, 2] and report["run"]["finished"]


@pytest.mark.parametrize("error, status", [(KeyboardInterrupt(), "interrupted"),
                                           (TrainingDiverged("loss is nan"), "diverged"),
                                           (MemoryError(), "failed")])
def test_a_pretraining_run_that_ends_early_says_so_in_its_report(small_corpus, tmp_path, monkeypatch, error,
                                                                  status):
    """A second Ctrl-C (which lands inside a step, past the loop's own stop), a diverged step or an error in
    step 4 of 6: the report, written at step 2's evaluation, says how the run ended instead of "running",
    the error goes on to the caller, and the run resumes from its last checkpoint to the end."""
    folder, steps = tmp_path / "run", []
    real_step = pretraining_loop.train_step

    def step_then_fail(*args):
        steps.append(1)
        if len(steps) == 4:
            raise error
        return real_step(*args)

    monkeypatch.setattr(pretraining_loop, "train_step", step_then_fail)
    config = small_config(small_corpus, steps=6, eval_every=2, checkpoint_every=2)
    with pytest.raises(type(error)):
        pretrain(config, folder, data_dir=small_corpus.parent, **quiet())
    assert report_of(folder)["run"]["status"] == status
    assert status in (folder / REPORT_PAGE).read_text("utf-8")
    monkeypatch.setattr(pretraining_loop, "train_step", real_step)
    assert pretrain(None, folder, resume=True, data_dir=small_corpus.parent, **quiet()).step == 6
    assert report_of(folder)["run"]["status"] == "finished"


@pytest.mark.parametrize("error, status", [(KeyboardInterrupt(), "interrupted"),
                                           (TrainingDiverged("loss is nan"), "diverged"),
                                           (MemoryError(), "failed")])
def test_a_fine_tuning_run_that_ends_early_says_so_in_its_report(tmp_path, monkeypatch, error, status):
    """Ctrl-C after the first epoch left report.json and report.html at "running" for good. However a run
    ends after its first report (a Ctrl-C landing in the second epoch's evaluation, a diverged step, an
    error), the report is written again with how and when it ended, and the error goes on to the caller."""
    task, model, examples = toy_fine_tuning(tmp_path)
    real_evaluate, calls = task.evaluate, []

    def evaluate_then_fail(*args):
        calls.append(1)
        if len(calls) == 2:
            raise error
        return real_evaluate(*args)

    monkeypatch.setattr(task, "evaluate", evaluate_then_fail)
    out = tmp_path / "tuned"
    with pytest.raises(type(error)):
        fine_tune(task, model, examples, examples[:8], FineTuneConfig(epochs=3, batch_size=4, plain=True),
                  out_dir=out, stream=io.StringIO(), record={"task": "toy"})
    report = report_of(out)
    assert report["run"]["status"] == status and report["run"]["ended"] is not None
    assert [entry["epoch"] for entry in report["epochs"]] == [1]
    page = (out / REPORT_PAGE).read_text("utf-8")
    assert f'"status":"{status}"' in page and '"status":"running"' not in page
    last = read_log(out / "log.jsonl")[-1]
    assert last["kind"] == "end" and last["stopped"] == status


def test_the_report_names_the_latest_plan_of_steps():
    """A run timed by the clock plans its steps again as it goes (step_plan.py): the page's "step N of M"
    takes M from the latest record that states it, not from the first plan."""
    records = [{"kind": "start", "step": 0, "total_steps": 1137, "time": "2026-12-04T05:24:00Z", "command": "c"},
               {"kind": "train", "step": 100, "total_steps": 1137},
               {"kind": "train", "step": 1200, "total_steps": 1232},
               {"kind": "end", "step": 1201, "total_steps": 1232, "stopped": "time limit",
                "time": "2026-12-04T05:39:00Z"}]
    assert report.pretrain_report_data(Path("run"), records)["run"]["total_steps"] == 1232
    assert report.pretrain_report_data(Path("run"), records[:2])["run"]["total_steps"] == 1137


def test_a_confusion_matrix_of_100_000_labels_shows_the_19_most_used_and_sums_the_rest():
    """100,000 labels would be a matrix of 10^10 cells (80 GB of counts, a page no browser opens): the
    report shows the 19 labels with the most dev examples, true or predicted, in the task's order, and
    counts the 99,981 others together in a last row and column; every example is still counted once."""
    from minibert.finetune.report import confusion_matrix

    labels = [f"topic {number}" for number in range(100_000)]
    rng = np.random.default_rng(0)
    frequent = [3, 70_000, 5, 99_999, 12, *range(1000, 1014)]  # 19 labels, each given 3 examples or more
    gold = np.array(frequent * 3 + rng.integers(20_000, 60_000, size=40).tolist())
    predicted = np.array(frequent[::-1] * 3 + rng.integers(20_000, 60_000, size=40).tolist())
    matrix = confusion_matrix(labels, gold, predicted)
    assert matrix["labels"] == [labels[index] for index in sorted(frequent)] + ["(99981 other labels)"]
    assert matrix["others"] == 99_981
    counts = np.array(matrix["counts"])
    assert counts.shape == (20, 20) and counts.sum() == len(gold)
    assert counts[19, 19] == 40  # the 40 examples of the rare labels, true and predicted among the others
    row_of = {label: row for row, label in enumerate(sorted(frequent))}
    assert counts[row_of[3], row_of[1013]] == 3  # gold 3 is paired with predicted 1013 three times


def test_the_examples_shown_are_cut_to_what_a_cell_shows():
    """Dev texts of 100,000 characters, and a label as long, are shown cut to 300 characters ending "…"."""
    from minibert.finetune.report import dev_predictions

    tokenizer = BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *WORDS])
    text, long_label = "good film " * 10_000, "x" * 100_000
    # The same text four times, so the model gives all four one answer: two of them are wrong.
    examples = [TextExample(text, None, label, f"x:{i}") for i, label in enumerate([long_label, "neg"] * 2)]
    task = ClassificationTask(tokenizer, max_seq_length=8)
    task.fit_labels(examples)
    model = BertForSequenceClassification(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size), 2)
    with pytest.warns(UserWarning, match="their ends were cut"):
        features = task.encode(examples)
    confusion, mistakes = dev_predictions(task, model, examples, features)
    assert len(mistakes) == 2
    for mistake in mistakes:
        assert len(mistake["text"]) == 300 and mistake["text"].endswith("…") and text.startswith(mistake["text"][:-1])
        assert {mistake["label"], mistake["predicted"]} == {"neg", "x" * 299 + "…"}
    assert sorted(confusion["labels"]) == ["neg", "x" * 299 + "…"]
