"""The experiments lab's harness: seeds, resume, the table's arithmetic, the results, the command line.

Most tests run a stub experiment whose "training" is one draw of a seeded random number, so they cost
milliseconds; a few check the real pieces (in-memory pretraining, the masking mix, the reversed reading)
on the small test corpus. The experiments' findings are reported in docs/experiments.md, not asserted.
"""

import io
import json
import math
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import replace

import numba
import numpy as np
import pytest
from helpers import small_config

from minibert.cli import main
from minibert.data.reverse import reverse_batch
from minibert.errors import ConfigError
from minibert.experiments import EXPERIMENTS, load_experiment
from minibert.experiments.pretraining import pretrain_in_memory
from minibert.experiments.results import draw_results, results_record, write_results
from minibert.experiments.runner import (
    CLAIMS_FOLDER,
    RESULTS_FILE,
    Experiment,
    eta_text,
    processes_at_work,
    run_experiment,
    run_path,
    time_left,
)
from minibert.experiments.setup import run_config
from minibert.experiments.summary import summarize, summarize_runs
from minibert.experiments.table import cell, format_table
from minibert.finetune.linear_probe import fit_linear_classifier, predict
from minibert.io.folder_lock import LOCK_FILE
from minibert.tokenizer import BertTokenizer
from minibert.train.pretraining_config import RUN_PRESETS
from minibert.train.pretraining_setup import open_batches, prepare_data

ARMS = {"a": "arm A", "b": "arm B"}


def stub(calls=None, interrupt_at=None):
    """An experiment whose run is one seeded draw per arm; `calls` records (arm, seed) of each run, and
    the run number `interrupt_at` (from 1) raises KeyboardInterrupt as Ctrl-C would."""
    calls = [] if calls is None else calls

    def run(arm, seed, settings, shared):
        calls.append((arm, seed))
        if interrupt_at is not None and len(calls) == interrupt_at:
            raise KeyboardInterrupt
        shared.setdefault("runs of this seed", []).append(arm)
        rng = np.random.default_rng([seed, ord(arm)])
        return {"score": float(rng.normal(50, 5)), "shared": len(shared["runs of this seed"])}

    return Experiment(name="stub", metrics=lambda mode: {"score": "score (%)"}, arms=lambda mode: ARMS,
                      settings=lambda mode: {"mode": mode, "steps": 3}, run=run, note="a stub")


def run_quietly(experiment, out, seeds=3, stream=None, mode="quick"):
    return run_experiment(experiment, mode, seeds, out, stream=stream or io.StringIO(), live=False)


def never_run(arm, seed, settings, shared):
    raise AssertionError("a folder that is refused is refused before any run")


def contents(folder):
    """{path: its bytes, or None for a folder} of everything under `folder`: what a refusal must leave as it was
    (an empty runs/ folder left behind would count)."""
    return {path: path.read_bytes() if path.is_file() else None for path in sorted(folder.rglob("*"))}


def test_every_arm_runs_with_distinct_seeds_and_the_same_seeds_give_the_same_results(tmp_path):
    records = run_quietly(stub(), tmp_path / "one")
    for arm in ARMS:
        assert sorted(r["seed"] for r in records if r["arm"] == arm) == [0, 1, 2]
        scores = [r["metrics"]["score"] for r in records if r["arm"] == arm]
        assert len(set(scores)) == 3
    again = run_quietly(stub(), tmp_path / "two")
    assert [r["metrics"] for r in again] == [r["metrics"] for r in records]
    # arms share the seed's `shared` dict, emptied when the seed changes
    assert [r["metrics"]["shared"] for r in records] == [1, 2] * 3


def test_the_real_experiments_give_each_seed_its_own_run_config():
    settings = load_experiment("masking").settings("quick")
    seeds = {run_config(settings, seed).seed for seed in range(3)}
    assert seeds == {0, 1, 2}
    assert run_config(settings, 1) == run_config(settings, 1)


# The ladder and sentence-task measure checkpoints they are given and pretrain none: they have no `pretrain`
# settings and no mini mode (tests/test_ladder.py).
PRETRAINING_EXPERIMENTS = sorted(set(EXPERIMENTS) - {"ladder", "sentence-task"})


@pytest.mark.parametrize("name", PRETRAINING_EXPERIMENTS)
def test_mini_mode_is_the_full_mode_with_the_mini_model(name):
    """A mini-mode table is comparable with the full one: the same steps, data and task sets, only the
    model (and the learning rate of its preset) differ."""
    experiment = load_experiment(name)
    full, mini = experiment.settings("full"), experiment.settings("mini")
    assert mini["pretrain"].pop("model") == "mini" and full["pretrain"].pop("model") == "tiny"
    assert mini["pretrain"].pop("lr") == RUN_PRESETS["mini"].lr
    full["pretrain"].pop("lr")
    if name == "size":  # every size is trained in both modes; only the budgets grow
        assert mini.pop("time_seconds") > full.pop("time_seconds")
        assert mini["pretrain"].pop("steps") > full["pretrain"].pop("steps")
    assert mini == full
    assert experiment.arms("mini") == experiment.arms("full")
    assert experiment.metrics("mini") == experiment.metrics("full")


def test_the_time_left_counts_each_run_at_its_own_kinds_pace():
    """The ladder's probes take seconds and its fine-tunings ten minutes: an estimate from the mean of all
    runs so far would promise hours for days of work (issue 52)."""
    records = {("probe-a", 0): {"seconds": 10.0}, ("probe-a", 1): {"seconds": 30.0}, ("probe-b", 0): None,
               ("tune-a", 0): {"seconds": 600.0}, ("tune-a", 1): None, ("tune-b", 0): None,
               ("big-a", 0): None}
    kind = {"probe": "probe", "tune": "fine-tuning", "big": "MiniLM"}
    seconds, untimed = time_left(records, lambda arm: kind[arm.split("-")[0]])
    assert (seconds, untimed) == (20.0 + 600.0 + 600.0, 1)
    assert eta_text(seconds, untimed) == "20:20 + 1 run not timed yet"
    assert time_left(records, lambda arm: None) == ((10 + 30 + 600) / 3 * 4, 0)  # one kind: the mean of all
    assert eta_text(0, 3) == "?" and eta_text(3725, 0) == "1:02:05"


def test_resume_skips_finished_runs_and_reruns_a_damaged_one(tmp_path):
    run_quietly(stub(), tmp_path)
    run_path(tmp_path, "b", 1).unlink()  # never finished
    run_path(tmp_path, "a", 2).write_text('{"arm": "a", "seed": 2, "metr')  # half written
    calls = []
    records = run_quietly(stub(calls), tmp_path)
    assert sorted(calls) == [("a", 2), ("b", 1)]
    assert len(records) == 6 and all(record is not None for record in records)


def with_changes(**changes):
    return lambda record: json.dumps({**record, **changes})


# damage -> (what it does to arm a's seed-1 record, the words that name it). A record is whole only if it holds
# every metric its arm measures, each a finite number, and the experiment, mode, arm and seed of its run:
# with {"score": "abc"} the rerun stopped in summary.py, and with {} or null it was skipped, its arm left out.
DAMAGES = {
    "cut short": (lambda record: json.dumps(record)[:40], "cut short, or not JSON"),
    "not an object": (lambda record: "[]", "not a JSON object"),
    "no metrics": (with_changes(metrics={}), "no score metric"),
    "a null metric": (with_changes(metrics={"score": None}), "score is None, not a number"),
    "a string metric": (with_changes(metrics={"score": "abc"}), "score is 'abc', not a number"),
    "a NaN metric": (with_changes(metrics={"score": math.nan}), "score is nan, not a number"),
    "true as a metric": (with_changes(metrics={"score": True}), "score is True, not a number"),
    "no seconds": (with_changes(seconds=None), "seconds None, not a number"),
    "another arm": (with_changes(arm="b"), "arm 'b', not 'a'"),
    "the seed as text": (with_changes(seed="1"), "seed '1', not 1"),
    "another mode": (with_changes(mode="full"), "mode 'full', not 'quick'"),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_record_is_named_kept_aside_and_its_run_made_again(tmp_path, damage):
    run_quietly(stub(), tmp_path)
    path = run_path(tmp_path, "a", 1)
    change, words = DAMAGES[damage]
    path.write_text(change(json.loads(path.read_text())))
    damaged = path.read_bytes()
    calls, stream = [], io.StringIO()
    records = run_quietly(stub(calls), tmp_path, stream=stream)
    assert calls == [("a", 1)]
    said = f"{path} is damaged ({words}): kept as a-seed1.json.damaged; its run is made again when the experiment runs"
    assert said in stream.getvalue()
    assert "5 of 6 runs already" in stream.getvalue()
    assert path.with_name("a-seed1.json.damaged").read_bytes() == damaged  # nothing lost
    summary = results_record(stub(), "quick", records, "python -m minibert experiment stub")["summary"]
    assert summary["a"]["score"]["n"] == summary["b"]["score"]["n"] == 3  # nothing left out of the table


def test_a_metric_an_arm_cannot_measure_is_not_damage(tmp_path):
    """nsp's `none` arm has no NSP head, so its runs have no `own` metric; they are whole without it."""
    nsp = load_experiment("nsp")
    assert nsp.measured("quick", "none") == ["story", "order"] and "own" in nsp.measured("quick", "nsp")

    def run(arm, seed, settings, shared):
        return {"score": 1.0} if arm == "a" else {}

    run_quietly(replace(stub(), run=run, unmeasured=lambda mode: {"b": {"score"}}), tmp_path)
    run_quietly(replace(stub(), run=never_run, unmeasured=lambda mode: {"b": {"score"}}), tmp_path)
    assert not list(tmp_path.rglob("*.damaged"))


def test_ctrl_c_keeps_the_finished_runs_and_says_how_to_go_on(tmp_path):
    stream = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        run_quietly(stub(interrupt_at=4), tmp_path, stream=stream)
    assert "3 of 6 runs are saved" in stream.getvalue() and "run the same command again" in stream.getvalue()
    calls = []
    run_quietly(stub(calls), tmp_path)
    assert calls == [("b", 1), ("a", 2), ("b", 2)]


def test_a_folder_of_other_settings_is_refused(tmp_path):
    run_quietly(stub(), tmp_path)
    before = contents(tmp_path)
    other = replace(stub(), settings=lambda mode: {"mode": mode, "steps": 4}, run=never_run)
    with pytest.raises(ConfigError, match=r"made with other settings \(steps 3, not 4\) \(runs/a-seed0.json\)"):
        run_quietly(other, tmp_path)
    assert contents(tmp_path) == before


def test_a_folder_of_another_mode_is_refused(tmp_path):
    """quick and full runs of one experiment are made differently (the stub's settings name the mode);
    their records are not mixed in one table."""
    run_quietly(stub(), tmp_path)
    before = contents(tmp_path)
    with pytest.raises(ConfigError) as refusal:
        run_quietly(replace(stub(), run=never_run), tmp_path, mode="full")
    assert str(refusal.value) == (f"{tmp_path} holds runs of stub made in quick mode, not full (runs/a-seed0.json); "
                                  f"give another --out, or delete {tmp_path} to start over")
    assert contents(tmp_path) == before


@pytest.mark.parametrize("left", ["runs", "results.json"])
def test_a_folder_of_another_experiment_is_refused(tmp_path, left):
    """A folder holding another experiment's runs (or only its results.json) is refused before anything
    runs: `experiment nsp --out E` with mask-rate's results in E mixed its records into E/runs and replaced
    E/results.json."""
    records = run_quietly(stub(), tmp_path)
    record = results_record(stub(), "quick", records, "python -m minibert experiment stub")
    write_results(tmp_path / RESULTS_FILE, record)
    if left == "runs":
        (tmp_path / "results.json").unlink()
    else:
        shutil.rmtree(tmp_path / "runs")
    before = contents(tmp_path)
    with pytest.raises(ConfigError) as refusal:
        run_quietly(replace(stub(), name="other", run=never_run), tmp_path)
    where = "runs/a-seed0.json" if left == "runs" else "results.json"
    assert str(refusal.value) == (f"{tmp_path} holds the runs of experiment stub ({where}), not of other; give "
                                  "other another --out")
    assert contents(tmp_path) == before


def test_mean_and_sample_standard_deviation_on_hand_made_numbers():
    summary = summarize([1.0, 2.0, 6.0])
    assert summary.mean == 3.0 and summary.n == 3 and (summary.low, summary.high) == (1.0, 6.0)
    assert summary.std == pytest.approx(math.sqrt(7))  # ((1-3)² + (2-3)² + (6-3)²) / (3 - 1) = 7
    assert cell(summary) == "3.0 ± 2.6 (1.0-6.0)"
    assert summarize([4.0]).std is None and cell(summarize([4.0])) == "4.0 (1 seed)"


def test_the_table_puts_each_arms_numbers_in_its_row():
    records = [{"arm": arm, "metrics": {"score": value}} for arm, value in
               [("a", 10.0), ("a", 20.0), ("b", 1.0), ("b", 3.0), ("b", 5.0)]]
    summaries = summarize_runs(records, ARMS, {"score": "score"})
    table = format_table(summaries, {"score": "score"}, ARMS).splitlines()
    assert table[1].split() == ["arm", "A", "15.0", "±", "7.1", "(10.0-20.0)"]
    assert table[2].split() == ["arm", "B", "3.0", "±", "2.0", "(1.0-5.0)"]
    assert "1/2/3" not in table[-1] and "2/3 seeds" in table[-1]


def test_results_record_and_picture(tmp_path):
    experiment = stub()
    records = run_quietly(experiment, tmp_path)
    record = results_record(experiment, "quick", records, "python -m minibert experiment stub")
    assert record["seeds"] == [0, 1, 2] and record["cpu"] and record["date"].endswith("UTC")
    scores = [r["metrics"]["score"] for r in records if r["arm"] == "a"]
    assert record["summary"]["a"]["score"]["mean"] == pytest.approx(sum(scores) / 3)
    svg = ElementTree.parse(draw_results(tmp_path / "stub.svg", record)).getroot()
    dots = [element for element in svg.iter() if element.get("class") == "value"]
    assert len(dots) == 6  # one per run


def test_the_command_prints_the_table_and_writes_the_results(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("minibert.cli.experiment.load_experiment", lambda name: stub())
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", "masking", "--seeds", "2", "--out", str(tmp_path)])
    assert exit_info.value.code == 0
    out, err = capsys.readouterr()
    assert "warning: 2 seed(s) per arm" in err
    assert "arm A" in out and "over 2 seeds" in out and "a stub" in out
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["command"] == f"python -m minibert experiment masking --quick --seeds 2 --out {tmp_path}"
    assert (tmp_path / "experiment-masking.svg").is_file()


def experiment_command(arguments, capsys):
    """(exit status, stdout, stderr) of `python -m minibert experiment ARGUMENTS`, run in this process."""
    with pytest.raises(SystemExit) as exit_info:
        main(["experiment", *map(str, arguments)])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_so_far_reports_the_saved_runs_of_a_stopped_experiment_and_runs_none(tmp_path, monkeypatch, capsys):
    """`--so-far` on a stopped experiment: the runs saved so far, in results-so-far.json (with how many runs
    the experiment plans, and each run's threads) and its picture, nothing run, the runs untouched; an empty
    folder is refused."""
    monkeypatch.setattr("minibert.cli.experiment.load_experiment", lambda name: stub())
    arguments = ["masking", "--seeds", "2", "--out", tmp_path]
    status, _, err = experiment_command([*arguments, "--so-far"], capsys)
    assert status == 2 and f"{tmp_path} holds no finished run of experiment masking --quick yet" in err
    with pytest.raises(KeyboardInterrupt):
        run_quietly(stub(interrupt_at=4), tmp_path, seeds=2)
    before = contents(tmp_path)
    monkeypatch.setattr("minibert.cli.experiment.load_experiment", lambda name: replace(stub(), run=never_run))
    status, out, _ = experiment_command([*arguments, "--so-far"], capsys)
    assert status == 0 and f"3 of {2 * len(ARMS)} runs so far" in out
    saved = json.loads((tmp_path / "results-so-far.json").read_text())
    assert saved["runs_planned"] == 2 * len(ARMS) and len(saved["runs"]) == 3
    kept = [json.loads(data) for path, data in before.items() if path.suffix == ".json"]
    assert sorted(saved["runs"], key=lambda run: (run["arm"], run["seed"])) == [
        {key: record[key] for key in ("arm", "seed", "metrics", "seconds", "threads")} for record in kept]
    assert (tmp_path / "experiment-masking-so-far.svg").is_file() and not (tmp_path / "results.json").exists()
    assert {path: data for path, data in contents(tmp_path).items() if path in before} == before


def test_the_command_makes_a_damaged_run_again_and_its_table_is_whole(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("minibert.cli.experiment.load_experiment", lambda name: stub())
    arguments = ["masking", "--seeds", "2", "--out", tmp_path]
    assert experiment_command(arguments, capsys)[0] == 0
    path = run_path(tmp_path, "a", 0)
    path.write_text(json.dumps({**json.loads(path.read_text()), "metrics": {"score": "abc"}}))
    status, out, err = experiment_command(arguments, capsys)
    assert status == 0 and f"{path} is damaged (score is 'abc', not a number)" in err
    assert "arm A" in out and "arm B" in out
    summary = json.loads((tmp_path / "results.json").read_text())["summary"]
    assert summary["a"]["score"]["n"] == summary["b"]["score"]["n"] == 2


def claimed_by(out, arm, seed, pid):
    """A claim on run (arm, seed) of `out` as process `pid` leaves it while making that run."""
    claim = out / CLAIMS_FOLDER / f"{arm}-seed{seed}"
    claim.mkdir(parents=True)
    (claim / LOCK_FILE).write_text(f"{pid}\n")
    return claim


def test_a_run_another_process_is_making_is_left_to_it_and_the_last_to_end_writes_the_results(
        tmp_path, monkeypatch, capsys):
    """Two processes in one folder (--join): a run claimed by a live process (here this one's parent) is not
    made again; the process that ends first says so and leaves results.json to the other, which, ending
    after that run is saved, reads it and writes the results of every run."""
    calls = []
    monkeypatch.setattr("minibert.cli.experiment.load_experiment", lambda name: stub(calls))
    arguments = ["masking", "--seeds", "2", "--out", tmp_path, "--join"]
    claim = claimed_by(tmp_path, "b", 0, os.getppid())
    status, out, _ = experiment_command(arguments, capsys)
    assert status == 0 and ("b", 0) not in calls and len(calls) == 2 * len(ARMS) - 1
    assert "1 run is still being made by another process" in out and not (tmp_path / "results.json").exists()
    records = [json.loads(run_path(tmp_path, arm, seed).read_text()) for arm, seed in calls]
    assert {record["threads"] for record in records} == {numba.config.NUMBA_NUM_THREADS}
    assert [path.name for path in (tmp_path / CLAIMS_FOLDER).iterdir()] == ["b-seed0"]  # the others let go
    # the other process saves its run and lets its claim go; this one, run again, makes nothing
    calls.clear()
    made = run_quietly(stub(), tmp_path / "elsewhere", seeds=1)
    shutil.copy(run_path(tmp_path / "elsewhere", "b", 0), run_path(tmp_path, "b", 0))
    shutil.rmtree(claim)
    status, out, _ = experiment_command(arguments, capsys)
    assert status == 0 and calls == [] and "arm B" in out
    saved = json.loads((tmp_path / "results.json").read_text())
    assert len(saved["runs"]) == 2 * len(ARMS) and made[1]["metrics"] in [run["metrics"] for run in saved["runs"]]


def test_the_time_left_is_shared_among_the_processes_at_work(tmp_path):
    """Another live process holding a claim halves what this one says is left; a dead one's claim does not."""
    assert processes_at_work(tmp_path) == 1  # this process alone, with no claim yet
    claimed_by(tmp_path, "a", 0, os.getppid())
    claimed_by(tmp_path, "a", 1, a_pid_that_ended())
    assert processes_at_work(tmp_path) == 2


def test_the_claim_of_a_process_that_died_is_taken_over(tmp_path):
    """A run whose process was killed (its claim left, its pid gone) is made by the next process."""
    calls = []
    claimed_by(tmp_path, "a", 1, a_pid_that_ended())
    run_quietly(stub(calls), tmp_path, seeds=2)
    assert ("a", 1) in calls and len(calls) == 2 * len(ARMS)
    assert list((tmp_path / CLAIMS_FOLDER / "a-seed1").iterdir()) == []  # the lock released, its folder left


def a_pid_that_ended():
    process = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                             text=True, check=True)
    return int(process.stdout)


def test_join_shares_a_folder_another_experiment_holds(tmp_path, monkeypatch, capsys):
    """Without --join a second experiment in a folder in use is refused (below); with it, it makes the runs."""
    monkeypatch.setattr("minibert.cli.experiment.load_experiment", lambda name: stub())
    out = a_folder_in_use(tmp_path)
    status, printed, _ = experiment_command(["masking", "--seeds", "2", "--out", out, "--join"], capsys)
    assert status == 0 and "(joined)" in printed and (out / "results.json").is_file()
    assert (out / LOCK_FILE).read_text() == f"{os.getppid()}\n"  # the other experiment's lock, untouched


def mask_rates_folder(folder):
    out = folder / "E"
    records = run_quietly(replace(stub(), name="mask-rate"), out)
    write_results(out / RESULTS_FILE, results_record(replace(stub(), name="mask-rate"), "quick", records, "mask-rate"))
    return out


def a_file(folder):
    (folder / "E").write_text("notes\n")
    return folder / "E"


def a_folder_under_a_file(folder):
    return a_file(folder) / "run"


def a_folder_in_use(folder):
    """What another `experiment` writing E leaves there: a lock holding its pid (here the pid of this
    process's parent, a process that runs and is not this one)."""
    (folder / "E").mkdir()
    (folder / "E" / LOCK_FILE).write_text(f"{os.getppid()}\n")
    return folder / "E"


# case -> (makes --out in a folder and returns it, the experiment, the start of the one error line)
REFUSED = {
    "another experiment's folder": (mask_rates_folder, "nsp",
                                    "{out} holds the runs of experiment mask-rate (results.json), not of nsp; "
                                    "give nsp another --out"),
    "a file": (a_file, "masking", "--out {out} is a file of 6 bytes from "),
    "a folder under a file": (a_folder_under_a_file, "masking", "{out}: Not a directory; a part of that path"),
    "a folder another experiment is writing": (a_folder_in_use, "masking",
                                               "{out} is in use by pid {pid}, another experiment writing it"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_the_command_refuses_before_any_run_and_changes_nothing(tmp_path, monkeypatch, capsys, case):
    """`experiment nsp --out E` over mask-rate's runs ran and mixed them; two experiments in one --out both
    made every run; --out naming a file failed when the first run was saved. Each now stops at once."""
    make, name, words = REFUSED[case]
    out = make(tmp_path)
    before = contents(tmp_path)
    experiment = load_experiment(name)
    monkeypatch.setattr("minibert.cli.experiment.load_experiment", lambda _: replace(experiment, run=never_run))
    status, _, err = experiment_command([name, "--out", out], capsys)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: " + words.format(out=out, pid=os.getppid()))
    assert contents(tmp_path) == before


@pytest.mark.parametrize("arguments, fragment", [
    (["experiment", "bogus"], "invalid choice: 'bogus'"),
    (["experiment", "nsp", "--seeds", "0"], "argument --seeds: 0 is out of range"),
    (["experiment", "nsp", "--seeds", "three"], "'three' is not a whole number"),
    (["experiment", "nsp", "--quick", "--full"], "not allowed with argument --quick"),
    (["experiment"], "the following arguments are required: NAME"),
])
def test_bad_names_and_flags_get_one_line(arguments, fragment, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(arguments)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and fragment in err[0]


def test_help_lists_the_eight_experiments(capsys):
    with pytest.raises(SystemExit):
        main(["experiment", "--help"])
    out = capsys.readouterr().out
    for name in ("direction", "masking", "mask-rate", "nsp", "pretraining-worth", "size", "ladder", "sentence-task"):
        assert f"  {name} " in out
    assert len(EXPERIMENTS) == 8


def test_reverse_batch_turns_only_the_real_tokens_and_keeps_the_masked_ones(rng):
    ids = np.array([[2, 5, 6, 7, 3, 0], [2, 8, 3, 9, 3, 0]])
    mask = np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]])
    batch = {"input_ids": ids, "segment_ids": np.zeros_like(ids), "input_mask": mask,
             "masked_lm_positions": np.array([[1, 0], [3, 4]]), "masked_lm_weights": np.array([[1, 0], [1, 1]])}
    turned = reverse_batch(batch)
    assert turned["input_ids"].tolist() == [[3, 7, 6, 5, 2, 0], [0, 3, 9, 3, 8, 2]]
    # each masked position still holds the token it held
    for row in range(2):
        for slot in range(2):
            if batch["masked_lm_weights"][row, slot]:
                assert (turned["input_ids"][row, turned["masked_lm_positions"][row, slot]]
                        == ids[row, batch["masked_lm_positions"][row, slot]])
    assert np.array_equal(reverse_batch(turned)["input_ids"], ids)


def test_the_linear_probe_separates_what_is_separable(rng):
    features = rng.normal(size=(300, 5))
    labels = (features[:, 0] + 0.5 * features[:, 3] > 0).astype(int)
    fitted = fit_linear_classifier(features[:200], labels[:200], 2)
    assert np.mean(predict(fitted, features[200:]) == labels[200:]) > 0.9
    shuffled = fit_linear_classifier(features[:200], rng.permutation(labels[:200]), 2)
    assert np.mean(predict(shuffled, features[200:]) == labels[200:]) < 0.75


def test_in_memory_pretraining_is_reproducible_and_follows_the_masking_mix(small_corpus):
    config = small_config(small_corpus, steps=3, use_nsp=False)
    first, second = (pretrain_in_memory(config, small_corpus.parent) for _ in range(2))
    for (name, a), (_, b) in zip(first.model.state_dict().items(), second.model.state_dict().items(), strict=True):
        assert np.array_equal(a, b), name
    # 0/100/0 (every chosen token unchanged): the training inputs keep every label
    same = small_config(small_corpus, steps=3, mask_token_prob=0.0, random_token_prob=0.0)
    shard_dir, vocab_path, _ = prepare_data(same, small_corpus.parent, log=lambda _: None)
    batch = next(open_batches(shard_dir, same)[0].epoch(0))
    shown = np.take_along_axis(batch["input_ids"], batch["masked_lm_positions"], axis=1)
    chosen = batch["masked_lm_weights"] > 0
    assert chosen.any() and np.array_equal(shown[chosen], batch["masked_lm_ids"][chosen])
    masked = small_config(small_corpus, steps=3, mask_token_prob=1.0, random_token_prob=0.0)
    batch = next(open_batches(shard_dir, masked)[0].epoch(0))
    shown = np.take_along_axis(batch["input_ids"], batch["masked_lm_positions"], axis=1)
    chosen = batch["masked_lm_weights"] > 0
    assert np.all(shown[chosen] == BertTokenizer(vocab_path).mask_token_id)


def test_the_sentence_order_task_is_balanced_and_labelled_by_its_rule():
    from minibert.data.corpora.document_pairs import story_documents
    from minibert.data.corpora.sentence_order import STORIES, sentence_order_examples
    train, dev = sentence_order_examples(60, 40)
    assert [label for _, _, label in dev].count("ordered") == 20
    neighbours = {(a, b) for documents in story_documents(STORIES).values() for story in documents
                  for a, b in zip(story[:-1], story[1:], strict=True)}
    for a, b, label in train + dev:
        assert ((a, b) if label == "ordered" else (b, a)) in neighbours
    assert sentence_order_examples(60, 40) == (train, dev)


def test_one_real_experiment_runs_end_to_end_at_a_tiny_size(small_corpus):
    """masking's 100/0/0 arm on the small corpus: 3 steps, 32 fine-tuning examples; a smoke test (its
    numbers mean nothing), so it checks only that each mode's metrics come back, as percentages."""
    from minibert.experiments import masking
    from minibert.experiments.setup import base_settings
    quick = base_settings("quick", masking.METRICS, train_size=32, dev_size=16, epochs=1, pretrain={
        "corpus": str(small_corpus), "max_seq_length": 32, "max_predictions_per_seq": 5, "vocab_size": 1000,
        "batch_size": 8, "steps": 3})
    full = {key: value for key, value in quick.items() if key != "measures"}  # as full mode's settings
    for mode, settings in (("quick", quick), ("full", full)):
        metrics = masking.run("100-0-0", 0, settings, {})
        assert set(metrics) == set(masking.METRICS[mode]) and all(0 <= value <= 100 for value in metrics.values())


def test_shown_as_themselves_puts_every_chosen_token_back_and_nothing_else(small_corpus):
    """quick `masking`'s measure reads the held-out batches with each chosen token put back in its place;
    a padded prediction slot (weight 0, position 0) must leave [CLS] alone."""
    from minibert.experiments.pretraining import ShownAsThemselves

    class OneBatch:
        def epoch(self, number):
            yield {"input_ids": np.array([[2, 4, 7, 4, 3, 0]]), "masked_lm_positions": np.array([[1, 3, 0]]),
                   "masked_lm_ids": np.array([[5, 9, 0]]), "masked_lm_weights": np.array([[1.0, 1.0, 0.0]])}

    assert next(ShownAsThemselves(OneBatch()).epoch(0))["input_ids"].tolist() == [[2, 5, 7, 9, 3, 0]]
    config = small_config(small_corpus, steps=1, use_nsp=False)
    shard_dir, _, _ = prepare_data(config, small_corpus.parent, log=lambda _: None)
    held_out = open_batches(shard_dir, config)[1]
    hidden = 0
    for batch, shown in zip(held_out.epoch(0), ShownAsThemselves(held_out).epoch(0), strict=True):
        chosen = batch["masked_lm_weights"] > 0
        rows, positions = np.nonzero(chosen)[0], batch["masked_lm_positions"][chosen]
        assert np.array_equal(shown["input_ids"][rows, positions], batch["masked_lm_ids"][chosen])
        moved = np.zeros(batch["input_ids"].shape, dtype=bool)
        moved[rows, positions] = True
        assert np.array_equal(shown["input_ids"][~moved], batch["input_ids"][~moved])
        hidden += int(np.sum(batch["input_ids"][rows, positions] != batch["masked_lm_ids"][chosen]))
    assert hidden > 0  # the held-out inputs did hide tokens, so putting them back was tested
