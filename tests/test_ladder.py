"""The ladder experiment (minibert/experiments/ladder*.py): its task files, its arms, its probe, a whole quick
run on a tiny model and a small task, and its picture. The real rungs' numbers are in docs/experiments.md."""

import hashlib
import json
import os
import re
import signal

import numpy as np
import pytest

from minibert.cli import main
from minibert.data.corpora.document_pairs import library_pairs
from minibert.data.corpora.package_topics import split_examples, write_splits
from minibert.errors import ConfigError, DataError
from minibert.experiments import ladder, ladder_arms, ladder_tasks, ladder_tuning, sentence_task
from minibert.experiments.bootstrap import unpack_documents
from minibert.experiments.code_version import code_version
from minibert.experiments.ladder_figure import ladder_svg
from minibert.experiments.results import results_record
from minibert.experiments.runner import run_experiment
from minibert.finetune import linear_probe
from minibert.finetune.linear_probe import fit_chosen_ridge, fit_linear_classifier, predict
from minibert.io import write_safetensors
from minibert.model import BertConfig, BertModel
from minibert.tokenizer.trainer import train_wordpiece
from minibert.train.interrupt import StopRequest
from tests.helpers import ROOT

SENTIMENT = ROOT / "data" / "synthetic" / "sentiment_train.tsv"


def test_all_examples_a_class_is_what_the_smallest_class_has():
    """train_per_label None takes every training sentence of the smallest label, as many of each label; a
    number still takes that many."""
    documents = {label: [[f"{label} {d} {s} five words here" for s in range(3)] for d in range(size)]
                 for label, size in (("big", 40), ("small", 12))}
    train, dev = split_examples(documents, None, 6, seed=0)
    counts = {label: sum(1 for _, found in train if found == label) for label in documents}
    assert counts["big"] == counts["small"] == 12 * 3 - 6
    assert not {s for s, _ in train} & {s for s, _ in dev}
    assert len(split_examples(documents, 10, 6, seed=0)[0]) == 20


def test_all_pairs_of_a_library_are_every_near_pair():
    docs = [[f"doc {d} sentence {s}" for s in range(6)] for d in range(8)]
    pairs = library_pairs(docs, None, np.random.default_rng(0))
    same = [pair for pair in pairs if pair[2] == "same"]
    assert len(same) == len(pairs) // 2 == 8 * 10  # 6 sentences give 5 + 4 + 3 near pairs, 10 at most
    assert all(a.split()[1] != b.split()[1] for a, b, label in pairs if label == "other")


def test_drawn_examples_are_per_class_seeded_and_refused_beyond_the_file():
    rows = [(f"s{index}", "ab"[index % 3 == 0]) for index in range(90)]
    drawn = ladder_tasks.draw_per_class(rows, 20, seed=1)
    assert sorted(label for _, label in drawn) == ["a"] * 20 + ["b"] * 20
    assert drawn == ladder_tasks.draw_per_class(rows, 20, seed=1)
    assert set(drawn) != set(ladder_tasks.draw_per_class(rows, 20, seed=2))
    with pytest.raises(DataError, match="label 'b' has 30 training examples, fewer than the 31"):
        ladder_tasks.draw_per_class(rows, 31, seed=0)


def test_the_chosen_penalty_avoids_the_peak_where_examples_match_features():
    """With as many examples as features and a noisy label spread over every feature, least squares with a
    small penalty fits the noise; the penalty chosen on held-out folds is larger and classifies new examples
    better (by 10 points and more on seeds 0-2)."""
    rng = np.random.default_rng(0)
    features = rng.normal(size=(1000, 150))
    labels = (features @ rng.normal(size=150) / np.sqrt(150) + 0.5 * rng.normal(size=1000) > 0).astype(int)
    train, test = slice(0, 150), slice(150, 1000)
    fitted, ridge = fit_chosen_ridge(features[train], labels[train], 2)
    small = fit_linear_classifier(features[train], labels[train], 2, ridge=0.1)
    chosen_accuracy = np.mean(predict(fitted, features[test]) == labels[test])
    assert ridge > 1.0 and chosen_accuracy > np.mean(predict(small, features[test]) == labels[test]) + 0.08
    assert fit_chosen_ridge(features[train], labels[train], 2)[1] == ridge  # no randomness


def test_arms_name_their_rung_task_way_and_size():
    for arms in (ladder.arms, sentence_task.EXPERIMENT.arms):
        for arm in [*arms("quick"), *arms("full")]:
            rung, task, way, size = ladder_arms.parse_arm(arm)
            assert ladder_arms.arm_name(rung, task, way, size) == arm and re.fullmatch(r"[A-Za-z0-9_.-]+", arm)
    # the hour on pydocs-large at 100 a class only, MiniLM fine-tuned at 100 only; LP-FT at 30 and 100
    assert len(ladder.arms("full")) == ((4 * 4 + 1) + (3 * 4 + 2) + (3 * 2 + 1)) * 3
    assert {ladder_arms.parse_arm(arm)[2] for arm in ladder.arms("quick")} == {"probe"}
    # the sentence-task rungs are sentence-task's alone: the ladder's settings (and its stored runs) keep theirs
    assert not {"15min_sop", "15min_none"} & set(ladder.settings("full")["folders"])
    assert set(sentence_task.EXPERIMENT.settings("full")["folders"]) == {"15min", "15min_sop", "15min_none"}


def test_the_full_ladder_runs_the_probes_then_the_headline_size_first():
    """Fine-tunings take days: stopped partway, the ladder must hold every rung's fine-tunings at 100 a class
    (what its findings are read at), not a slice of every size; and every arm of the mode runs."""
    ways_and_sizes = [ladder_arms.parse_arm(arm)[2:] for arm in ladder.arms("full")]
    ways = [way for way, _ in ways_and_sizes]
    assert ways == sorted(ways, key=["probe", "finetune", "lpft"].index)  # probes, fine-tuning, LP-FT
    tuned = [size for way, size in ways_and_sizes if way == "finetune"]
    assert tuned[:5 * 3] == [ladder.HEADLINE_SIZE] * (5 * 3)  # every rung, every task
    for mode in ("quick", "full"):  # the order leaves out no arm a mode's blocks measure
        blocks = ladder.MODES[mode]["ways"].items()
        measured = {ladder_arms.arm_name(rung, task, way, size) for way, way_blocks in blocks for block in way_blocks
                    for rung in block["rungs"] for size in block["sizes"] for task in ladder.MODES[mode]["tasks"]}
        assert set(ladder.arms(mode)) == measured, mode


def test_bad_modes_rungs_and_folders_are_refused_with_what_to_do(tmp_path):
    with pytest.raises(ConfigError, match="--quick .* or --full"):
        ladder.settings("mini")
    with pytest.raises(ConfigError, match="rungs with a folder are 15min, minilm"):
        ladder.with_folders(ladder.settings("quick"), {"60min": "x"})
    with pytest.raises(ConfigError, match=re.escape("pretrain --minutes 60 --out runs/mini-pydocs-60min")):
        ladder.check_rungs({"folders": {"60min": str(tmp_path / "missing")}})


def test_a_missing_rung_stops_the_command_before_any_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no runs/mini-pydocs here
    with pytest.raises(SystemExit) as stopped:
        main(["experiment", "ladder", "--out", str(tmp_path / "E")])
    assert stopped.value.code == 2
    assert "no model folder runs/mini-pydocs for the rung '15 minutes of pretraining'" in capsys.readouterr().err
    assert not (tmp_path / "E" / "tasks").exists() and not (tmp_path / "E" / "runs").exists()


@pytest.mark.parametrize("arguments, words", [
    (["masking", "--rung", "15min=x"], "--rung is the option of ladder and sentence-task"),
    (["ladder", "--rung", "15min"], "give NAME=DIR"),
])
def test_the_rung_option_is_checked(arguments, words, capsys, tmp_path):
    with pytest.raises(SystemExit) as stopped:
        main(["experiment", *arguments, "--out", str(tmp_path / "E")])
    assert stopped.value.code == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "E").exists()


# Two learning rates, a few steps: the budget's machinery on a tiny model in seconds
TINY_BUDGET = {"learning_rates": [1e-3, 3e-3], "min_steps": 6, "max_epochs": 3, "dropout": 0.1, "batch_size": 32,
               "evaluations": 2}


@pytest.fixture
def small_ladder(tmp_path, monkeypatch):
    """The ladder on a tiny one-layer model and a small task of the synthetic sentiment sentences: every rung
    with a folder is that model (so its rungs differ from random weights only by the weights)."""
    folder = tmp_path / "model"
    folder.mkdir()
    tokens = train_wordpiece([SENTIMENT], 300, out=folder / "vocab.txt")
    BertModel(BertConfig.preset("tiny", vocab_size=len(tokens), num_hidden_layers=1)).save_pretrained(folder)
    rows = [line.split("\t") for line in SENTIMENT.read_text(encoding="utf-8").splitlines()[1:]]

    def build(out_dir, train_per_label, dev_per_label, seed, pretraining_corpus=None):
        assert train_per_label is None and pretraining_corpus == ["kept out"]
        write_splits(out_dir, rows[:1000], rows[1000:1000 + 2 * dev_per_label])

    def documents(task, pretraining_corpus):  # the rows' documents: five sentences each, in the file's order
        return {"label": [[row[0] for row in rows[start:start + 5]] for start in range(0, len(rows), 5)]}

    monkeypatch.setitem(ladder_tasks.LADDER_TASKS, "sentiment",
                        ladder_tasks.LadderTask(build, 1, {"label": ("numpy",)}))
    monkeypatch.setattr(ladder_tasks.LadderTask, "documents", documents)
    monkeypatch.setattr(ladder_tasks, "resolve_corpus", lambda *_, **__: "kept out")
    monkeypatch.setattr(ladder, "TUNING", TINY_BUDGET)
    monkeypatch.setitem(ladder.MODES, "quick", {
        "tasks": ["sentiment"], "validation_per_class": 50, "test_per_class": 60,
        "ways": {"probe": [{"rungs": ["random", "15min"], "sizes": ["30", "100"]}],
                 "finetune": [{"rungs": ["random"], "sizes": ["30"]}],
                 "lpft": [{"rungs": ["15min"], "sizes": ["30"]}]}})
    return ladder.with_folders(ladder.settings("quick"), {"15min": str(folder)}), folder


def test_a_quick_ladder_measures_every_arm_and_draws_them(small_ladder, tmp_path):
    """Every arm of every way, through the protocol: choices on validation, the test split scored by the
    chosen model, and results.json saying where the runs come from (issue 52)."""
    settings, folder = small_ladder
    (folder / "log.jsonl").write_text('{"event": "start", "step": 0}\n', encoding="utf-8")  # its pretraining log
    experiment = ladder.EXPERIMENT.__class__(**{**ladder.EXPERIMENT.__dict__, "settings": lambda mode: settings})
    out = tmp_path / "E"
    command = "python -m minibert experiment ladder --quick --seeds 2"
    records = run_experiment(experiment, "quick", 2, out, stream=open(tmp_path / "log", "w"), live=False,
                             command=command)
    check_protocol(records, out / "tasks" / "sentiment", settings["tuning"]["learning_rates"])
    results = results_record(experiment, "quick", records, command, out)
    assert results["made_by"] == {command: 12}
    assert results["made_with"] == [{"code": code_version(), "runs": 12}]  # one process, one version of the code
    pinned = results["provenance"]["checkpoints"]["15min"]
    assert pinned["sha256"] == hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert (out / pinned["log"]).read_bytes() == (folder / "log.jsonl").read_bytes()
    assert results["provenance"]["tasks"]["sentiment"]["sources"] == {"numpy": np.__version__}
    # each test row's document (the fixture's: five sentences of the file each), numbered as the rows meet them
    first_line = {}
    for index, line in enumerate(SENTIMENT.read_text(encoding="utf-8").splitlines()[1:]):
        first_line.setdefault(line.split("\t")[0], index)
    numbers = {}
    expected = [numbers.setdefault(first_line[row[0]] // 5, len(numbers))
                for row in ladder_tasks.read_rows(out / "tasks" / "sentiment" / "test.tsv")]
    found = unpack_documents(results["provenance"]["tasks"]["sentiment"]["test_documents"])
    assert found.shape == (len(expected), 1) and found[:, 0].tolist() == expected and len(numbers) > 5
    assert len(records) == 2 * 6
    assert [record["seed"] for record in records[:2]] == [0, 1] and records[0]["arm"] == records[1]["arm"]
    assert records[0]["arm"] == "random-sentiment-probe-30"  # the probe first, its smallest size, both seeds
    for record in records:
        rung, task, way, size = ladder_arms.parse_arm(record["arm"])
        metrics = record["metrics"]
        assert 0 <= metrics["accuracy"] <= 100 and metrics["per_class"] == int(size)
        assert metrics["train_examples"] == 2 * int(size)
    drawn = (out / "tasks" / "sentiment" / "train-30-seed1.tsv").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(line.rsplit("\t", 1)[1] for line in drawn) == ["negative"] * 30 + ["positive"] * 30
    by_arm = {(record["arm"], record["seed"]): record["metrics"]["accuracy"] for record in records}
    # random weights are drawn per seed, and each seed draws its own examples
    assert by_arm[("random-sentiment-probe-100", 0)] != by_arm[("random-sentiment-probe-100", 1)]
    svg = ladder_svg(results_record(experiment, "quick", records, "test"))
    assert svg.count('class="series"') == 4 and svg.count('class="point"') == 2 + 2 + 1 + 1
    assert ">30</text>" in svg and ">100</text>" in svg and "sentiment, linear probe" in svg
    assert "sentiment, probe, then fine-tuned" in svg


def check_protocol(records, task_folder, rates):
    """What every run record of the protocol holds, checked against the task's files themselves."""
    train, validation, test = (ladder_tasks.read_rows(task_folder / name)
                               for name in ("train.tsv", "validation.tsv", "test.tsv"))
    labelled = task_folder / "labelled"
    assert not set(validation) & set(train)  # validation is cut from the pool, and leaves it
    assert sorted(validation + train) == sorted(ladder_tasks.read_rows(labelled / "train.tsv"))
    assert test == ladder_tasks.read_rows(labelled / "dev.tsv")  # the held-out documents, whole
    manifest = json.loads((task_folder / "splits.json").read_text(encoding="utf-8"))
    for name, digest in manifest["sha256"].items():
        assert digest == hashlib.sha256((task_folder / name).read_bytes()).hexdigest()
    for record in records:
        metrics = record["metrics"]
        assert (metrics["selected_on"], metrics["reported_on"]) == ("validation", "test")
        assert metrics["test_examples"] == len(test)
        right = bin(int(metrics["test_correct"], 16)).count("1")  # the packed bits of the examples right
        assert metrics["accuracy"] == pytest.approx(100 * right / len(test))
        if "trials" in metrics:  # a fine-tuning: one trial per rate, the best on validation chosen
            scores = {trial["learning_rate"]: trial["validation_accuracy"] for trial in metrics["trials"]}
            assert list(scores) == rates
            assert scores[metrics["chosen"]["learning_rate"]] == max(scores.values()) == metrics["validation_accuracy"]
            trial_dir = record_trials(task_folder.parent.parent, record)
            assert "fine-tuning:" in (trial_dir / f"lr{rates[0]:g}.log").read_text(encoding="utf-8")
        else:
            assert metrics["chosen"]["ridge"] in linear_probe.RIDGE_GRID


def record_trials(out, record):
    return out / "trials" / f"{record['arm']}-seed{record['seed']}"


def test_ctrl_c_during_a_probe_stops_at_its_next_batch(small_ladder, tmp_path, monkeypatch):
    """A Ctrl-C while the probe encodes its sentences stops the experiment after that batch of 32, not after
    the whole run (most of a minute for MiniLM): the run in progress is not saved, nothing else was, and the
    runner says so."""
    settings, _ = small_ladder
    experiment = ladder.EXPERIMENT.__class__(**{**ladder.EXPERIMENT.__dict__, "settings": lambda mode: settings})
    encoded, real_encode = [], ladder.SentenceEncoder.encode

    def encode_then_ctrl_c(self, texts, **options):
        if not encoded:
            os.kill(os.getpid(), signal.SIGINT)  # pressed while the first batch is encoded
        encoded.append(len(texts))
        return real_encode(self, texts, **options)

    monkeypatch.setattr(ladder.SentenceEncoder, "encode", encode_then_ctrl_c)
    said, log = [], tmp_path / "log"
    with StopRequest(said.append, "stopping"), pytest.raises(KeyboardInterrupt):
        run_experiment(experiment, "quick", 1, tmp_path / "E", stream=open(log, "w"), live=False)
    assert said == ["stopping"] and len(encoded) == 1 and encoded[0] <= 32  # one batch, of the 160 texts
    assert not list((tmp_path / "E" / "runs").glob("*.json"))
    assert "stopped: 0 of 6 runs are saved" in log.read_text()


def test_a_rung_of_another_kind_is_refused_before_any_run(small_ladder, tmp_path, monkeypatch, capsys):
    """A rung folder laid out as GPT-2's (config.json of model_type gpt2, a BPE tokenizer) is refused in one
    line naming the rung and the folder, before any run (it was refused after the random and 15-minute arms
    had run); nothing is made in --out, and the folder is left as it was."""
    _, folder = small_ladder
    monkeypatch.setitem(ladder.MODES, "quick", {**ladder.MODES["quick"], "ways": {
        "probe": [{"rungs": ["random", "15min", "minilm"], "sizes": ["30"]}]}})
    gpt2 = tmp_path / "gpt2"
    gpt2.mkdir()
    (gpt2 / "config.json").write_text('{"model_type": "gpt2", "n_layer": 1, "n_head": 2, "n_embd": 8}')
    (gpt2 / "tokenizer.json").write_text('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}')
    write_safetensors(gpt2 / "model.safetensors", {"transformer.wte.weight": np.zeros((1, 8), np.float32),
                                                   "transformer.h.0.attn.c_attn.weight": np.zeros((8, 24),
                                                                                                  np.float32)})
    before = {path.name: path.read_bytes() for path in gpt2.iterdir()}
    out = tmp_path / "E"
    with pytest.raises(SystemExit) as stopped:
        main(["experiment", "ladder", "--quick", "--seeds", "1", "--out", str(out), "--rung", f"15min={folder}",
              "--rung", f"minilm={gpt2}"])
    error = "".join(line for line in capsys.readouterr().err.splitlines(True) if not line.startswith("warning"))
    assert stopped.value.code == 2 and error.count("\n") == 1, error
    assert f"error: the rung 'all-MiniLM-L6-v2' (--rung minilm={gpt2}): " in error and "'gpt2' model" in error
    assert not (out / "runs").exists() and not (out / "tasks").exists()
    assert {path.name: path.read_bytes() for path in gpt2.iterdir()} == before


@pytest.mark.parametrize("way, pair_file, recipe, options", [
    ("finetune", False, {"pooling": "cls", "head_init": "random"}, {}),
    ("finetune", True, {"pooling": "cls", "head_init": "random"}, {}),
    ("lpft", False, {"pooling": "mean", "head_init": "probe"}, {}),
    ("lpft", True, {"pooling": "mean", "head_init": "probe"}, {"pair_encoder": "bi"}),
])
def test_each_fine_tuning_way_asks_the_finetune_command_for_its_recipe(way, pair_file, recipe, options, tmp_path,
                                                                       monkeypatch):
    """BERT's recipe reads the pooler's [CLS] whatever the folder (the stored runs were made so); LP-FT reads
    the probe's own features: the mean of the tokens, and a pair's two texts apart. Every rung gets the
    budget's dropout, batch and the rate asked, and enough epochs for the budget's steps, on validation."""
    asked = {}

    def fake_run(task, folder, train, dev, settings, random_init, task_options, stream, log):
        asked.update(settings=settings, options=task_options, dev=dev, random_init=random_init)
        return None, None, type("Result", (), {"best_metrics": {"accuracy": 0.5}, "best_epoch": 1, "history": [],
                                               "warning": None})()

    monkeypatch.setattr(ladder_tuning, "run_finetuning", fake_run)
    train = tmp_path / "train.tsv"
    train.write_text("sentence1\tsentence2\tlabel\na\tb\tsame\n" if pair_file else "sentence\tlabel\na\tpos\n",
                     encoding="utf-8")
    settings = {"folders": {"15min": str(tmp_path)}, "tuning": TINY_BUDGET}
    start = ladder.fine_tuning_start(settings, "random", tmp_path, way, pair_file)
    files = ladder_tasks.TaskFiles(train, tmp_path / "validation.tsv", tmp_path / "test.tsv")
    _, _, trial = ladder_tuning.fine_tune_once(start, files, train, 2, 3e-3, tmp_path / "trials", settings)
    assert {name: getattr(asked["settings"], name) for name in recipe} == recipe
    assert asked["settings"].seed == 2 and asked["options"] == options and asked["random_init"]
    assert (asked["settings"].dropout, asked["settings"].learning_rate, asked["settings"].epochs) == (0.1, 3e-3, 3)
    assert asked["dev"] == files.validation and trial["validation_accuracy"] == 50.0


def test_a_folder_named_like_the_package_is_read_as_the_folder(tmp_path, monkeypatch):
    """`--rung minilm=packaged` names a folder called `packaged` (here in the current folder): it is that
    folder the rung reads and checks, not the model package the default `packaged` stands for."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "packaged"
    BertModel(BertConfig.preset("tiny", vocab_size=40, num_hidden_layers=1)).save_pretrained(folder)
    (folder / "vocab.txt").write_text("".join(f"{token}\n" for token in
                                              ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *map(str, range(35))]))
    monkeypatch.setattr(ladder, "packaged_model_zip", lambda: None)  # the package is not installed
    monkeypatch.setattr(ladder, "extract_packaged_model", lambda cache: tmp_path / "the package's model")
    settings = ladder.with_folders(ladder.settings("quick"), {"minilm": "packaged"})
    ladder.check_rungs({"folders": {"minilm": settings["folders"]["minilm"]}})  # the folder is there
    assert ladder.rung_folder(settings, "minilm", tmp_path / "E").resolve() == folder
    # the default, unchanged, still names the package
    assert ladder.rung_folder(ladder.settings("quick"), "minilm", tmp_path / "E") == tmp_path / "the package's model"
