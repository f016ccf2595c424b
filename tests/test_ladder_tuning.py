"""The ladder's protocol (minibert/experiments/ladder_tuning.py, bootstrap.py, ladder_provenance.py,
ladder_table.py): a stopped fine-tuning resumes at its next learning rate and ends where an unstopped one
does; a run no better than chance is marked and no gain is reported against it; the probe's penalty is
chosen on validation; the bootstrap's interval has the binomial's width; a changed checkpoint is refused.
The whole protocol on a tiny model: tests/test_ladder.py."""

import hashlib
import json
import math
import re

import numpy as np
import pytest

from minibert.cli import main
from minibert.errors import ConfigError, DataError
from minibert.experiments import ladder, ladder_tasks, ladder_tuning
from minibert.experiments.bootstrap import (
    bootstrap_interval,
    example_weights,
    pack_correct,
    pack_documents,
    unpack_correct,
    unpack_documents,
)
from minibert.experiments.ladder_figure import ladder_svg
from minibert.experiments.ladder_provenance import describe_checkpoint, pin_checkpoints
from minibert.experiments.ladder_table import cost_table, ladder_cells, markdown_tables
from minibert.experiments.runner import run_experiment
from minibert.finetune import FineTuneConfig
from minibert.finetune.linear_probe import RIDGE_GRID, fit_chosen_on_held_out, fit_linear_classifier, last_best, predict
from minibert.model import BertConfig, BertModel
from minibert.nn.layers import Dropout
from tests import test_ladder

TINY_BUDGET = test_ladder.TINY_BUDGET
small_ladder = test_ladder.small_ladder  # the fixture: a tiny model, the sentiment sentences as a task


def fine_tuning_only(settings):
    """The small ladder's settings measuring random weights fine-tuned at 30 a class, nothing else."""
    return {**settings, "rungs": ["random"], "sizes": ["30"],
            "ways": {"finetune": [{"rungs": ["random"], "sizes": ["30"]}]}}


def one_arm(settings):
    experiment = ladder.EXPERIMENT
    return experiment.__class__(**{**experiment.__dict__, "settings": lambda mode: settings,
                                   "arms": lambda mode: {"random-sentiment-finetune-30": "random, 30 a class"}})


def test_a_stopped_fine_tuning_resumes_at_its_next_rate_and_ends_as_an_unstopped_one(small_ladder, tmp_path,
                                                                                     monkeypatch):
    """Ctrl-C in the second learning rate's fine-tuning: the first rate's is saved and not made again; the
    run then ends with the very record a run never stopped gives (the chosen model made again, when it was
    the saved one, from the same seed)."""
    settings = fine_tuning_only(small_ladder[0])
    experiment, real = one_arm(settings), ladder_tuning.run_finetuning
    asked = []

    def counted(*args, settings, **options):
        asked.append(settings.learning_rate)
        if stop_at is not None and len(asked) == stop_at:
            raise KeyboardInterrupt
        return real(*args, settings=settings, **options)

    monkeypatch.setattr(ladder_tuning, "run_finetuning", counted)
    log = open(tmp_path / "log", "w")
    stop_at = None
    [whole] = run_experiment(experiment, "quick", 1, tmp_path / "whole", stream=log, live=False)
    first, second = TINY_BUDGET["learning_rates"]
    assert asked == [first, second]  # the chosen model was kept in memory: the test set read without retraining
    asked.clear()
    stop_at = 2
    with pytest.raises(KeyboardInterrupt):
        run_experiment(experiment, "quick", 1, tmp_path / "stopped", stream=log, live=False)
    assert (tmp_path / "stopped" / "trials" / "random-sentiment-finetune-30-seed0" / f"lr{first:g}.json").is_file()
    asked.clear()
    stop_at = None
    [resumed] = run_experiment(experiment, "quick", 1, tmp_path / "stopped", stream=log, live=False)
    chosen = whole["metrics"]["chosen"]["learning_rate"]
    assert asked == [second] + ([first] if chosen == first else [])
    assert resumed["metrics"] == whole["metrics"]


def test_a_run_no_better_than_chance_learned_nothing():
    """On 100 validation rows of two balanced labels, chance is 50% and the margin two standard errors,
    2 * sqrt(0.25 / 100) = 10 points: 60% is not yet learning, 61% is."""
    rows = [("text", "ab"[index % 2]) for index in range(100)]
    assert not ladder_tuning.learned_something(0.5, rows)
    assert not ladder_tuning.learned_something(0.6, rows)
    assert ladder_tuning.learned_something(0.61, rows)
    # three labels, one of them half the rows: always answering it scores 50%
    skewed = [("text", "abcc"[index % 4]) for index in range(400)]
    assert not ladder_tuning.learned_something(0.54, skewed) and ladder_tuning.learned_something(0.56, skewed)


def protocol_record(learned_random):
    """A stored record of the protocol by hand: random weights and MiniLM fine-tuned at 30 a class, 2 seeds,
    on 10 test examples. Random weights get 5 and 6 right, MiniLM 8 and 9."""
    def run(rung, seed, right, learned):
        correct = [index < right for index in range(10)]
        return {"arm": f"{rung}-doc-pairs-finetune-30", "seed": seed, "seconds": 1.0,
                "metrics": {"accuracy": 10.0 * right, "learned": learned, "test_examples": 10,
                            "test_correct": pack_correct(correct), "per_class": 30.0}}
    runs = [run("random", 0, 5, learned_random), run("random", 1, 6, True), run("minilm", 0, 8, True),
            run("minilm", 1, 9, True)]
    return {"settings": {"protocol": ladder.PROTOCOL, "tasks": ["doc-pairs"], "sizes": ["30"],
                         "rungs": ["random", "minilm"]}, "runs": runs}


def test_no_gain_is_reported_against_a_run_that_learned_nothing():
    table = markdown_tables(protocol_record(learned_random=False))["doc-pairs"]
    random_cell, minilm_cell = table.splitlines()[2].split(" | ")[1:3]
    assert random_cell.startswith("55.0 ± 7.1 [") and random_cell.endswith(", learned nothing in 1 of 2")
    assert "(" not in minilm_cell and minilm_cell.startswith("85.0 ± 7.1 [")
    svg = ladder_svg(protocol_record(learned_random=False))
    assert "random weights: learned nothing" in svg and "test accuracy (%)" in svg
    # when every run learned, the gain is there, with its paired interval
    learned = ladder_cells(protocol_record(learned_random=True))[("doc-pairs", "finetune", "30", "minilm")]
    assert learned.gain == pytest.approx(30.0) and learned.gain_interval[0] <= 30.0 <= learned.gain_interval[1]
    assert "(+30.0 [" in markdown_tables(protocol_record(learned_random=True))["doc-pairs"]


def test_the_cost_table_gives_each_group_of_runs_its_median_and_range():
    """Runs apart by way, by MiniLM or a mini rung, and by threads; the median, not the mean, of a group
    where one run was slowed (3 runs of 100, 110 and 400 s: median 110)."""
    runs = [{"arm": arm, "seed": seed, "seconds": seconds, **({"threads": threads} if threads else {})}
            for arm, seed, seconds, threads in [
                ("random-doc-pairs-finetune-30", 0, 100.0, 1), ("15min-doc-pairs-finetune-30", 0, 400.0, 1),
                ("60min-doc-pairs-finetune-100", 1, 110.0, 1), ("minilm-doc-pairs-finetune-30", 0, 900.0, 1),
                ("random-doc-pairs-probe-30", 0, 2.0, None), ("random-doc-pairs-finetune-30", 1, 50.0, 2)]]
    rows = [line.split(" | ") for line in cost_table({"runs": runs}).splitlines()[2:]]
    assert [row[:4] for row in rows] == [["| fine-tuned", "the mini rungs", "1", "3"],
                                         ["| fine-tuned", "the mini rungs", "2", "1"],
                                         ["| fine-tuned", "all-MiniLM-L6-v2", "1", "1"],
                                         ["| linear probe", "the mini rungs", "not recorded", "1"]]
    assert rows[0][4:] == ["110 (100-400)", "0.2 |"] and rows[2][4:] == ["900 (900-900)", "0.2 |"]


def test_the_figure_gives_each_rung_one_look_on_every_panel():
    """MiniLM alone on one panel and beside random weights on the other: the same colour and dash on both
    (drawn by position, it would take random weights' look where it is alone), and "all" labelled with its
    count a class."""
    def run(arm, per_class):
        return {"arm": arm, "seed": 0, "seconds": 1.0,
                "metrics": {"accuracy": 60.0, "learned": True, "test_examples": 2,
                            "test_correct": pack_correct([True, False]), "per_class": per_class}}
    record = {"settings": {"protocol": ladder.PROTOCOL, "tasks": ["package-topics", "doc-pairs"],
                           "sizes": ["30", "all"], "rungs": ["random", "minilm"]},
              "runs": [run("minilm-package-topics-finetune-30", 30.0), run("random-doc-pairs-finetune-30", 30.0),
                       run("minilm-doc-pairs-finetune-30", 30.0), run("minilm-doc-pairs-finetune-all", 1825.5)]}
    svg = ladder_svg(record)
    looks = re.findall(r'<polyline class="series" points="[^"]*" fill="none" ([^>]*)><title>all-MiniLM-L6-v2<', svg)
    assert len(looks) == 2 and looks[0] == looks[1], looks
    assert ">all (1,826)</text>" in svg and ">30</text>" in svg


def test_the_tables_resample_the_test_set_by_the_documents_the_record_holds():
    plain = protocol_record(learned_random=True)
    pairs = [[0, 1], [1, 1], [2, 3], [3, 3], [4, 4]] * 2  # the 10 test pairs' documents: 5 of them
    record = {**plain, "provenance": {"tasks": {"doc-pairs": {"test_documents": pack_documents(pairs)}}}}
    key = ("doc-pairs", "finetune", "30", "minilm")
    cell = ladder_cells(record)[key]
    minilm, random_weights = ([[index < right for index in range(10)] for right in rights]
                              for rights in ((8, 9), (5, 6)))  # as protocol_record's runs
    assert cell.interval == bootstrap_interval(minilm, documents=np.array(pairs))
    assert cell.gain_interval == bootstrap_interval(minilm, random_weights, np.array(pairs))
    assert cell.interval != ladder_cells(plain)[key].interval  # without them, row by row


def test_the_bootstrap_interval_has_the_binomial_width_and_pairs_the_arms():
    correct = np.arange(400) % 10 < 7  # 70% of 400 examples
    assert np.array_equal(unpack_correct(pack_correct(correct), 400), correct)
    low, high = bootstrap_interval(correct[None, :])
    binomial = 2 * 1.96 * 100 * math.sqrt(0.7 * 0.3 / 400)  # 8.98 points: the normal approximation's width
    assert low < 70 < high and 0.85 * binomial < high - low < 1.15 * binomial
    # the same examples right in both arms: the gain is 0 in every resample
    assert bootstrap_interval(correct[None, :], correct[None, :]) == (0.0, 0.0)
    # two seeds: the mean over them, still one test set
    both = np.stack([correct, np.roll(correct, 1)])
    assert bootstrap_interval(both)[0] < 70 < bootstrap_interval(both)[1]


def test_the_bootstrap_resamples_documents_not_their_sentences():
    """100 documents of 5 sentences, each document's sentences all right or all wrong: the test set holds 100
    independent answers, not 500, and its interval is the binomial width of 100."""
    documents = np.repeat(np.arange(100), 5)  # (500,)
    correct = (documents % 10 < 7)[None, :]  # 70 documents of 100 right
    low, high = bootstrap_interval(correct, documents=documents)
    binomial = 2 * 1.96 * 100 * math.sqrt(0.7 * 0.3 / 100)  # 17.96 points
    assert low < 70 < high and 0.85 * binomial < high - low < 1.15 * binomial
    alone = bootstrap_interval(correct)  # as if the 500 were independent: half as wide, and wrong
    assert alone[1] - alone[0] < 0.6 * binomial


def test_a_pair_goes_with_its_documents_and_counts_once_on_average():
    """A pair inside a document goes with it, a pair across two with both; each pair, of either kind, is
    counted once on average (a pair inside a document counted for each copy twice would weigh double)."""
    pairs = np.array([[0, 0], [0, 1], [1, 2], [2, 2], [3, 1]])
    weights = example_weights(pairs, 20000, np.random.default_rng(0))  # (20000, 5)
    assert np.allclose(weights.mean(axis=0), 1.0, atol=0.05)
    # doc 0 not drawn (the pair inside it gets 0): the pair across 0 and 1 is not there either
    assert np.all(weights[weights[:, 0] == 0, 1] == 0)
    assert np.all(weights[weights[:, 3] == 0, 2] == 0)  # nor the pair across 1 and 2 without doc 2
    # the counts multiply: with doc 2 drawn, doc 1's count is the pair across 1 and 2 over the pair inside 2
    seen = weights[:, 3] > 0
    count_1 = weights[seen, 2] / weights[seen, 3]
    assert np.array_equal(weights[seen, 1], weights[seen, 0] * count_1)
    assert unpack_documents(pack_documents(pairs.tolist())).tolist() == pairs.tolist()
    with pytest.raises(DataError, match="4 test documents given for 5 test examples"):
        bootstrap_interval(np.ones((1, 5), dtype=bool), documents=pairs[:4])


def test_the_probe_penalty_is_the_best_on_validation_and_test_labels_choose_nothing(rng):
    features = rng.normal(size=(600, 60))
    labels = (features @ rng.normal(size=60) + 2.0 * rng.normal(size=600) > 0).astype(int)
    train, held = slice(0, 80), slice(80, 600)
    fitted, ridge, accuracy = fit_chosen_on_held_out(features[train], labels[train], features[held], labels[held], 2)
    each = [np.mean(predict(fit_linear_classifier(features[train], labels[train], 2, penalty), features[held])
                    == labels[held]) for penalty in RIDGE_GRID]
    assert accuracy == pytest.approx(max(each)) and each[RIDGE_GRID.index(ridge)] == max(each)
    assert np.array_equal(predict(fitted, features[held]),
                          predict(fit_linear_classifier(features[train], labels[train], 2, ridge), features[held]))
    assert last_best([0.5, 0.7, 0.7, 0.6]) == 2  # on a tie the later, larger penalty


def test_the_ladder_probe_reads_test_labels_only_to_score(tmp_path, rng):
    """The same training and validation rows with the test labels turned over: the same penalty, the same
    validation score, and a test score of 100 minus the first."""
    vectors = {f"t{index}": rng.normal(size=8) for index in range(300)}
    label = {text: "ab"[int(vector[0] > 0)] for text, vector in vectors.items()}
    rows = [(text, label[text]) for text in vectors]
    files = ladder_tasks.TaskFiles(tmp_path / "train.tsv", tmp_path / "validation.tsv", tmp_path / "test.tsv")
    flipped = {"a": "b", "b": "a"}
    scores = []
    for test_rows in (rows[200:], [(text, flipped[found]) for text, found in rows[200:]]):
        for path, part in ((files.validation, rows[100:200]), (files.test, test_rows)):
            ladder_tasks.write_tsv(path, part)
        scores.append(ladder_tuning.probe(lambda rows: np.array([vectors[row[0]] for row in rows]), files,
                                          rows[:100]))
    assert scores[0]["chosen"] == scores[1]["chosen"]
    assert scores[0]["validation_accuracy"] == scores[1]["validation_accuracy"]
    assert scores[0]["accuracy"] == pytest.approx(100 - scores[1]["accuracy"])


def test_the_splits_are_the_same_bytes_each_time_they_are_cut(small_ladder, tmp_path):
    made = [ladder_tasks.task_files("sentiment", tmp_path / name, 50, 60, ["pydocs"]) for name in ("a", "b")]
    for field in ("train", "validation", "test"):
        assert getattr(made[0], field).read_bytes() == getattr(made[1], field).read_bytes()


def test_a_rung_whose_weights_changed_is_refused_in_its_folder(tmp_path):
    folder = tmp_path / "model"
    BertModel(BertConfig.preset("tiny", vocab_size=40, num_hidden_layers=1), seed=0).save_pretrained(folder)
    (folder / "log.jsonl").write_text("{}\n", encoding="utf-8")
    out = tmp_path / "E"
    found = describe_checkpoint(folder)
    assert found["sha256"] == hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    pin_checkpoints({"15min": found}, out)
    pin_checkpoints({"15min": describe_checkpoint(folder)}, out)  # the same weights: resumed
    BertModel(BertConfig.preset("tiny", vocab_size=40, num_hidden_layers=1), seed=1).save_pretrained(folder)
    with pytest.raises(ConfigError, match="rung 15min's weights .* are not those the runs in .* were made with"):
        pin_checkpoints({"15min": describe_checkpoint(folder)}, out)
    (out / "checkpoints.json").write_text("[1, 2", encoding="utf-8")  # cut short
    with pytest.raises(ConfigError, match="checkpoints.json is damaged .*; delete it"):
        pin_checkpoints({"15min": describe_checkpoint(folder)}, out)
    assert (out / "checkpoints.json").read_text(encoding="utf-8") == "[1, 2"  # left as it was, for the user


def test_one_dropout_for_every_model(tmp_path):
    """FineTuneConfig(dropout=p) sets every dropout of the model, whatever its config had (mini: 0.0)."""
    from minibert.finetune.loop import set_dropout

    model = BertModel(BertConfig.preset("tiny", vocab_size=40, num_hidden_layers=2, hidden_dropout_prob=0.0,
                                        attention_probs_dropout_prob=0.0))
    set_dropout(model, 0.1)
    dropouts = [module.p for _, module in model.named_modules() if isinstance(module, Dropout)]
    assert len(dropouts) >= 5 and set(dropouts) == {0.1}
    assert model.config.hidden_dropout_prob == model.config.attention_probs_dropout_prob == 0.1
    with pytest.raises(ConfigError, match="dropout=1.0 must be in"):
        FineTuneConfig(dropout=1.0)


def test_the_command_runs_the_protocol_end_to_end_and_a_second_call_adds_nothing(small_ladder, tmp_path, capsys):
    """`experiment ladder --quick` on the tiny ladder: every run, then results.json saying which command made
    them and which checkpoints and splits; run again, it skips them all and its record is made by the one
    command still."""
    _, folder = small_ladder
    out = tmp_path / "E"
    arguments = ["experiment", "ladder", "--quick", "--seeds", "1", "--out", str(out), "--rung", f"15min={folder}"]
    run_command(arguments)
    first = json.loads((out / "results.json").read_text(encoding="utf-8"))
    command = f"python -m minibert experiment ladder --quick --seeds 1 --out {out} --rung 15min={folder}"
    assert first["made_by"] == {command: 6} and first["settings"]["protocol"] == ladder.PROTOCOL
    assert set(first["provenance"]["checkpoints"]) == {"15min"} and set(first["provenance"]["tasks"]) == {"sentiment"}
    assert "test accuracy (%)" in capsys.readouterr().out
    run_command(arguments)
    assert "6 of 6 runs already in" in capsys.readouterr().err
    again = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert again["runs"] == first["runs"] and again["made_by"] == {command: 6}


def run_command(arguments):
    with pytest.raises(SystemExit) as done:
        main(arguments)
    assert done.value.code == 0


def test_the_full_mode_runs_the_protocol():
    settings = ladder.settings("full")
    assert settings["protocol"] == ladder.PROTOCOL and settings["tuning"] == ladder_tuning.TUNING
    assert (settings["validation_per_class"], settings["test_per_class"]) == (100, 300)


def test_a_task_too_small_for_the_largest_size_is_refused_before_any_run(small_ladder, tmp_path):
    """The tiny task's pool (the first 1,000 sentiment rows, less 50 a label to validation) cannot give 600 a
    label: refused in one line naming the task and its smaller label, before any run."""
    settings, _ = small_ladder
    lines = test_ladder.SENTIMENT.read_text(encoding="utf-8").splitlines()[1:1001]  # the fixture's pool
    labels = [line.rsplit("\t", 1)[1] for line in lines]
    smaller = min(set(labels), key=labels.count)
    with pytest.raises(ConfigError, match=f"the task sentiment, less its validation and test splits: label "
                                          f"'{smaller}' has {labels.count(smaller) - 50} training examples, fewer "
                                          "than the 600 asked for"):
        ladder.check_and_pin({**settings, "sizes": ["30", "600"]}, tmp_path / "E")
    assert not (tmp_path / "E" / "runs").exists()
