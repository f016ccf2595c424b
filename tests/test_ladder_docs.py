"""Every table of docs/experiments.md's ladder section and of docs/ladder-history.md, and every figure of
lesson 22's prose, against the stored records in docs/figures: a number a reader sees must be one the stored
runs give.

The tables are read the way a referee would: each cell's mean, spread, min-max, interval, gain over random
weights and "learned nothing" are recomputed from the runs of the record the table reports. Both kinds of
record are read. One made before issue 52's protocol (settings without `protocol`, the 378 runs of
docs/figures/experiment-ladder-before-protocol.json) reports dev accuracy; one made with it
reports test accuracy, with bootstrap intervals and the runs that learned nothing, and no gain may be shown
against an arm with such a run. Each stored record of the protocol is also read run by run (a run's score,
its choice and its `learned` against its own trials and test answers), and the figures the prose gives of the
budget's edge and of the bar for "learned nothing" against their records and plateau.py.
"""

import hashlib
import json
import re

import numpy as np
import pytest

from minibert.experiments.bootstrap import bootstrap_interval, unpack_correct
from minibert.experiments.ladder_arms import RUNGS, WAYS, arm_name, parse_arm
from minibert.experiments.ladder_table import documents_of_test_rows, ladder_cells
from minibert.finetune.plateau import chance_margin
from tests.helpers import ROOT

FIGURES = ROOT / "docs" / "figures"
# A column's title -> the rung it reports (the docs' short titles, and the ones ladder_table.py writes)
COLUMNS = {"random weights": "random", "15 minutes": "15min", "60 minutes": "60min",
           "60 minutes, pydocs-large": "60min_large", "all-MiniLM-L6-v2": "minilm",
           **{label: rung for rung, label in RUNGS.items()}}
ROW_WAYS = {"probe": "probe", "fine-tuned": "finetune", **{label: way for way, label in WAYS.items()}}
# The quick mode's table takes its 60-minute column from the run whose "15-minute" rung was the hour
QUICK_COLUMNS = {"random weights": ("experiment-ladder-quick.json", "random"),
                 "15 minutes": ("experiment-ladder-quick.json", "15min"),
                 "60 minutes": ("experiment-ladder-quick-hour.json", "15min"),
                 "all-MiniLM-L6-v2": ("experiment-ladder-quick.json", "minilm")}
NUMBER = r"[-+]?\d+\.\d"


def ladder_section():
    """docs/experiments.md's ladder section, then docs/ladder-history.md: what the ladder's records are said to
    show, now and before."""
    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    start = text.index("\n## ladder:")
    history = (ROOT / "docs" / "ladder-history.md").read_text(encoding="utf-8")
    return text[start:text.index("\n## ", start + 1)] + "\n" + history


def tables(section):
    """[(the bold line before it, [rows of cells])] of every markdown table in `section`."""
    found, title, rows = [], "", []
    for line in section.splitlines() + [""]:
        if line.startswith("|"):
            if not set(line) <= set("|-: "):  # a separator line, with its alignment
                rows.append([cell.strip() for cell in line.strip("|").split("|")])
            continue
        if rows:
            found.append((title, rows))
            rows = []
        if line.startswith("**"):
            title = line
    return found


def record(name):
    return json.loads((FIGURES / name).read_text(encoding="utf-8"))


def runs_of(stored, rung, task, way, size):
    return [run for run in stored["runs"] if run["arm"] == arm_name(rung, task, way, size)]


def correct(runs):
    return np.array([unpack_correct(run["metrics"]["test_correct"], run["metrics"]["test_examples"])
                     for run in runs])


def check_cell(text, runs, base_runs, where, documents=None, protocol=False):
    """`text` (a table cell) against the runs of its arm and of random weights' arm beside it; its intervals
    resample the test set by `documents` (each test row's; None: row by row), and are required of a record
    made with the protocol."""
    if not runs:
        assert text == "", f"{where}: {text!r} but the record has no such runs"
        return
    values = np.array([run["metrics"]["accuracy"] for run in runs])
    mean = re.match(NUMBER, text)
    assert mean and abs(float(mean.group()) - values.mean()) <= 0.05 + 1e-9, (where, text, values.mean())
    if (std := re.search(rf"± ({NUMBER})", text)) is not None:
        assert abs(float(std.group(1)) - values.std(ddof=1)) <= 0.05 + 1e-9, (where, text)
    if (span := re.search(rf"\(({NUMBER})-({NUMBER})\)", text)) is not None:
        assert abs(float(span.group(1)) - values.min()) <= 0.05 + 1e-9, (where, text)
        assert abs(float(span.group(2)) - values.max()) <= 0.05 + 1e-9, (where, text)
    interval = re.match(rf"{NUMBER}(?: ± {NUMBER})? \[({NUMBER}), ({NUMBER})\]", text)
    assert interval is not None or not protocol, f"{where}: {text!r} gives no interval of the test set's luck"
    if interval is not None:
        low, high = bootstrap_interval(correct(runs), documents=documents)
        assert [float(interval.group(1)), float(interval.group(2))] == pytest.approx([low, high], abs=0.05), where
    failed = sum(not run["metrics"].get("learned", True) for run in runs)
    said = re.search(r"learned nothing in (\d+) of (\d+)", text)
    assert (int(said.group(1)), int(said.group(2))) == (failed, len(runs)) if said else failed == 0, (where, text)
    base_failed = any(not run["metrics"].get("learned", True) for run in base_runs)
    gain = re.search(rf"\(({NUMBER})(?: \[({NUMBER}), ({NUMBER})\])?\)", text)
    if gain is None:
        return
    assert base_runs and not base_failed and not failed, f"{where}: a gain against or of a run that learned nothing"
    base = np.mean([run["metrics"]["accuracy"] for run in base_runs])
    assert abs(float(gain.group(1)) - (values.mean() - base)) <= 0.05 + 1e-9, (where, text)
    assert gain.group(2) is not None or not protocol, f"{where}: {text!r} gives a gain without its interval"
    if gain.group(2) is not None:
        low, high = bootstrap_interval(correct(runs), correct(base_runs), documents)
        assert [float(gain.group(2)), float(gain.group(3))] == pytest.approx([low, high], abs=0.05), where


def test_every_table_of_the_ladder_section_is_its_stored_record():
    found = tables(ladder_section())
    checked = 0
    for title, rows in found:
        header, body = rows[0], rows[1:]
        if header[0] == "rung":  # the rungs' table: names and commands, no numbers
            continue
        if header[0] == "examples a class":  # the quick mode's probe on package-topics
            for row in body:
                base = runs_of(record(QUICK_COLUMNS["random weights"][0]), "random", "package-topics", "probe", row[0])
                for column, text in zip(header[1:], row[1:], strict=True):
                    name, rung = QUICK_COLUMNS[column]
                    check_cell(text, runs_of(record(name), rung, "package-topics", "probe", row[0]), base,
                               f"quick, {column}, {row[0]}")
                    checked += 1
            continue
        # a table of another record than the stored full one names its file in its title
        named = re.search(r"figures/(experiment-ladder[\w-]*\.json)", title)
        stored = record(named.group(1) if named else "experiment-ladder.json")
        if header[:2] == ["way", "rungs"]:  # what the runs took
            checked += check_cost_table(body, stored, title)
            continue
        assert header[0] == "way, a class", f"a table the test does not know how to read: {header}"
        task = re.match(r"\*\*([\w-]+)", title).group(1)
        protocol = "protocol" in stored["settings"]
        shown = set()
        for row in body:
            way_label, size = row[0].rsplit(", ", 1)
            way = ROW_WAYS[way_label]
            base = runs_of(stored, "random", task, way, size)
            for column, text in zip(header[1:], row[1:], strict=True):
                check_cell(text, runs_of(stored, COLUMNS[column], task, way, size), base, f"{task}, {row[0]}, {column}",
                           documents_of_test_rows(stored, task), protocol)
                shown.add(arm_name(COLUMNS[column], task, way, size))
                checked += 1
        # and no arm of the task is left out of its table
        assert {run["arm"] for run in stored["runs"] if f"-{task}-" in run["arm"]} <= shown, task
    assert checked >= 3 * 4 + 3 * 10 * 5  # the quick table and the three full ones, every cell


def check_cost_table(rows, stored, title):
    """A table of what the runs took: each row's count, median, range and hours against the record's own
    seconds, its runs grouped by way, MiniLM or a mini rung, and threads; every run in one row."""
    seconds = {}
    for run in stored["runs"]:
        rung, rest = run["arm"].split("-", 1)
        way = WAYS[rest.rsplit("-", 2)[1]]
        rungs = RUNGS["minilm"] if rung == "minilm" else "the mini rungs"
        group = (way, rungs, str(run.get("threads", "not recorded")))
        seconds.setdefault(group, []).append(run["seconds"])
    for row in rows:
        times = seconds.pop(tuple(row[:3]), [])
        median, low, high = (float(number) for number in re.match(r"(\d+) \((\d+)-(\d+)\)", row[4]).groups())
        assert int(row[3]) == len(times), (title, row)
        assert [median, low, high] == pytest.approx([np.median(times), min(times), max(times)], abs=0.5), (title, row)
        assert float(row[5]) == pytest.approx(sum(times) / 3600, abs=0.05), (title, row)
    assert not seconds, f"{title}: runs in no row: {sorted(seconds)}"
    return len(rows)


def lesson_22_prose():
    """Lesson 22's comment lines from "What the stored runs say" on, in three parts: what it says of the stored
    record, of the first rerun (from its "## The first rerun" heading on) and of the second (from "## The second
    rerun" on)."""
    lesson = (ROOT / "lessons" / "22_ladder.py").read_text(encoding="utf-8")
    stored_part = lesson[lesson.index("# What the stored runs say"):]
    first_at, second_at = stored_part.index("# ## The first rerun"), stored_part.index("# ## The second rerun")
    comments = [
        "\n".join(line for line in part.splitlines() if line.startswith("#"))
        for part in (stored_part[:first_at], stored_part[first_at:second_at], stored_part[second_at:])]
    return comments


def figures_of(stored):
    """Every figure a reader may be told of a record, to one decimal: each arm's mean and its gain over random
    weights (either sign), and for a record of the protocol the 95% intervals of both (the test set resampled
    by document), a gain only where neither arm's runs learned nothing. Also each figure with its interval, as
    one signed triple (figure, low, high): the prose's "+6.9 [+3.9, +10.1]" must be one cell's, whole."""
    protocol = "protocol" in stored["settings"]
    figures, triples = set(), set()

    def seen(figure, interval=None):
        figures.add(round(abs(float(figure)), 1))
        if interval is not None:
            figures.update(round(abs(end), 1) for end in interval)
            triples.add(tuple(round(float(value), 1) for value in (figure, *interval)))

    arms = {}
    for run in stored["runs"]:
        arms.setdefault(run["arm"], []).append(run)
    for arm, runs in arms.items():
        rung, task, way, size = parse_arm(arm)
        documents = documents_of_test_rows(stored, task) if protocol else None
        mean = np.mean([run["metrics"]["accuracy"] for run in runs])
        seen(mean, bootstrap_interval(correct(runs), documents=documents) if protocol else None)
        base = arms.get(arm_name("random", task, way, size))
        if base is None or rung == "random":
            continue
        if any(not run["metrics"].get("learned", True) for run in runs + base):
            continue
        gain = mean - np.mean([run["metrics"]["accuracy"] for run in base])
        seen(gain, bootstrap_interval(correct(runs), correct(base), documents) if protocol else None)
    return figures, triples


def test_the_figures_of_lesson_22s_prose_are_the_stored_records():
    """Each number with a decimal in what lesson 22 says of the stored runs is a mean or a gain over random
    weights (in points, either sign) of the stored record: "MiniLM about 17" where the record says +21.0 is
    caught. What it says of the first rerun is read against that record, intervals included, and what it says
    of the second, which it sets beside the first, against the two."""
    parts = (["experiment-ladder-before-protocol.json"], ["experiment-ladder-first-rerun.json"],
             ["experiment-ladder-first-rerun.json", "experiment-ladder-second-rerun.json"])
    for prose, names in zip(lesson_22_prose(), parts, strict=True):
        name = names[-1]
        found = [figures_of(record(each)) for each in names]
        figures, triples = set().union(*(each[0] for each in found)), set().union(*(each[1] for each in found))
        said = [float(number) for number in re.findall(r"(?<![\d.])\d+\.\d(?!\d)", prose)]
        assert said, f"the prose about {name} names no figure"
        assert [number for number in said if number not in figures] == [], name
        said = re.findall(rf"({NUMBER}) \[({NUMBER}), ({NUMBER})\]", prose.replace("\n#  ", ""))
        assert [triple for triple in said if tuple(float(value) for value in triple) not in triples] == [], name


def budget_edge_paragraphs():
    """Each record of the budget's edge (bench/ladder_budget_edge.py) the ladder section names in a table's
    title, with the paragraph just before that title: the one that reads it."""
    section = ladder_section()
    found = {}
    for name in sorted(set(re.findall(r"figures/(experiment-ladder-budget-edge[\w-]*\.json)", section))):
        title = section.index(f"(docs/figures/{name})")
        before = section[:section.rindex("\n\n", 0, title)].rstrip()
        found[name] = before[before.rindex("\n\n") + 2:].replace("\n", " ")
    return found


def check_budget_edge_paragraph(paragraph, stored):
    """What one paragraph says of its record; returns how many of its optional claims it makes (each checked)."""
    runs, added = stored["runs"], stored["added_rate"]
    chosen = sum(run["metrics"]["chosen"]["learning_rate"] == added for run in runs)
    said = re.search(r"chosen in (\d+) of the (\d+) runs", paragraph)
    assert (int(said.group(1)), int(said.group(2))) == (chosen, len(runs)), said.group()
    claims = 0
    below = {}
    for run in runs:
        trials = {trial["learning_rate"]: trial["validation_accuracy"] for trial in run["metrics"]["trials"]}
        budget = max(accuracy for rate, accuracy in trials.items() if rate != added)
        below.setdefault(run["arm"].startswith("random-"), []).append(budget - trials[added])
    spans = re.search(rf"by ({NUMBER}) to ({NUMBER}) points for the pretrained rungs, by ({NUMBER}) to ({NUMBER}) for "
                      "random weights", paragraph)
    if spans:
        claims += 1
        assert [float(number) for number in spans.groups()] == pytest.approx(
            [min(below[False]), max(below[False]), min(below[True]), max(below[True])], abs=0.05), spans.group()
    # "k of the n runs end on the plateau, at LOW to HIGH% on validation ... the training loss at A to B"
    plateau = re.search(rf"(\d+) of the (\d+) runs end on the plateau, at ({NUMBER}) to ({NUMBER})% on validation "
                        r".*? the training loss at (\d\.\d\d) to (\d\.\d\d)", paragraph)
    if plateau:
        claims += 1
        last = [run["added_trial"]["history"][-1] for run in runs]
        ends = sorted((evaluation["validation_accuracy"], evaluation["train_loss"]) for evaluation in last)
        at_chance = [end for end in ends if end[0] <= float(plateau.group(4)) + 0.05]
        assert (int(plateau.group(1)), int(plateau.group(2))) == (len(at_chance), len(runs)), plateau.group()
        assert [at_chance[0][0], at_chance[-1][0]] == pytest.approx(
            [float(plateau.group(3)), float(plateau.group(4))], abs=0.05), plateau.group()
        assert ends[len(at_chance)][0] > 50, ends  # the next run off the plateau: the count is not a cut in a crowd
        losses = [loss for _, loss in at_chance]
        said_losses = [float(plateau.group(5)), float(plateau.group(6))]
        assert [min(losses), max(losses)] == pytest.approx(said_losses, abs=0.005 + 1e-9), (losses, plateau.group())
    # "best look came among its first K evaluations ... in k of the n runs": where the added rate peaked
    early = re.search(r"best look came among its first (\d+) evaluations .*? in (\d+) of the (\d+) runs", paragraph)
    if early:
        claims += 1
        histories = [[look["validation_accuracy"] for look in run["added_trial"]["history"]] for run in runs]
        peaked = sum(int(np.argmax(history)) < int(early.group(1)) for history in histories)
        assert (int(early.group(2)), int(early.group(3))) == (peaked, len(runs)), early.group()
    # "random weights end on the plateau (V%, the training loss at ln 3 = L), the pretrained rungs' runs at A to
    # B% on validation": where the added rate's fine-tunings ended
    ends = re.search(rf"random weights end on the plateau \(({NUMBER})%, the training loss at ln \d = (\d\.\d\d)\), "
                     rf"the pretrained rungs' runs at ({NUMBER}) to ({NUMBER})% on validation", paragraph)
    if ends:
        claims += 1
        last = {kind: [run["added_trial"]["history"][-1] for run in runs if run["arm"].startswith("random-") == kind]
                for kind in (True, False)}
        assert {round(look["validation_accuracy"], 1) for look in last[True]} == {float(ends.group(1))}, last[True]
        assert {round(look["train_loss"], 2) for look in last[True]} == {float(ends.group(2))}, last[True]
        pretrained = [look["validation_accuracy"] for look in last[False]]
        assert [float(ends.group(3)), float(ends.group(4))] == pytest.approx(
            [min(pretrained), max(pretrained)], abs=0.05), ends.group()
    # "on test they score A, B and C": the runs' test accuracies, seed by seed
    tested = re.search(rf"on test they score ({NUMBER}), ({NUMBER}) and ({NUMBER})", paragraph)
    if tested:
        claims += 1
        scores = [run["metrics"]["accuracy"] for run in sorted(runs, key=lambda run: run["seed"])]
        assert [float(number) for number in tested.groups()] == pytest.approx(scores, abs=0.05), tested.group()
    # "best look on validation came at epoch E": every run's chosen epoch
    epoch = re.search(r"best look on validation came at epoch (\d+)", paragraph)
    if epoch:
        claims += 1
        assert {run["metrics"]["chosen"]["epoch"] for run in runs} == {int(epoch.group(1))}, epoch.group()
    # "passes the "learned" bar, at V% against B%, on one of its N looks, with the training loss then L"
    lucky = re.search(rf"passes the \"learned\" bar, at ({NUMBER})% against ({NUMBER})%, on one of its (\d+) looks, "
                      r"with the training loss then (\d\.\d+)", paragraph)
    if lucky:
        claims += 1
        learned = [run for run in runs if run["metrics"]["learned"]]
        assert len(learned) == 1, [run["seed"] for run in learned]
        history = learned[0]["added_trial"]["history"]
        look = max(history, key=lambda evaluation: evaluation["validation_accuracy"])
        assert float(lucky.group(1)) == pytest.approx(look["validation_accuracy"], abs=0.05), lucky.group()
        assert int(lucky.group(3)) == len(history), lucky.group()
        assert float(lucky.group(4)) == pytest.approx(look["train_loss"], abs=0.0005), lucky.group()
        rows = stored["provenance"]["tasks"][parse_arm(learned[0]["arm"])[1]]["rows"]["validation.tsv"]
        chance = stored["settings"]["validation_per_class"] / rows
        assert float(lucky.group(2)) == pytest.approx(100 * (chance + chance_margin(chance, rows)), abs=0.05)
    return claims


def test_what_the_docs_say_of_a_rate_outside_the_budget_is_its_record():
    """The budget's edge (bench/ladder_budget_edge.py), one paragraph per record: how often the added rate was
    chosen, and as each paragraph says it, how far below the chosen rate's its validation accuracy fell, how
    many runs it left on the plateau, how soon the added rate peaked and where its runs ended, what the runs
    then score on test, and at which epoch their chosen look was."""
    paragraphs = budget_edge_paragraphs()
    assert len(paragraphs) >= 2, sorted(paragraphs)
    for name, paragraph in paragraphs.items():
        assert check_budget_edge_paragraph(paragraph, record(name)) >= 2, (name, paragraph[:80])


def test_the_docs_bar_for_learned_something_is_plateaus_test():
    """The scores the protocol's bullet gives as the bar a run must pass on validation are plateau.py's, on the
    validation splits of the rerun's record (100 a class: 300 topic sentences, 200 pairs)."""
    said = re.search(r"(\d+\.\d)% on a topic task's (\d+) validation sentences, (\d+\.\d)% on doc-pairs' (\d+) "
                     "validation pairs", ladder_section().replace("\n  ", " "))
    per_class = record("experiment-ladder-first-rerun.json")["settings"]["validation_per_class"]
    assert (int(said.group(2)), int(said.group(4))) == (3 * per_class, 2 * per_class)
    for bar, chance, count in ((said.group(1), 1 / 3, 3 * per_class), (said.group(3), 1 / 2, 2 * per_class)):
        assert float(bar) == pytest.approx(100 * (chance + chance_margin(chance, count)), abs=0.05), said.group()


def test_what_the_docs_say_of_random_weights_doc_pairs_probe_on_test_is_the_record():
    """"Learned nothing" is validation's verdict; the docs set it against test: random weights' doc-pairs probe
    above chance on test at every size, with its intervals' low ends, as the rerun's record gives them."""
    said = re.search(rf"random\s+weights' probe is above chance at every size, its intervals' low ends ({NUMBER}) "
                     rf"to ({NUMBER})", ladder_section().replace("\n  ", " "))
    assert said, "the docs no longer set the doc-pairs probe's verdict against test"
    stored = record("experiment-ladder-first-rerun.json")
    documents = documents_of_test_rows(stored, "doc-pairs")
    lows = [bootstrap_interval(correct(runs_of(stored, "random", "doc-pairs", "probe", size)), documents=documents)[0]
            for size in stored["settings"]["sizes"]]
    assert min(lows) > 50, lows
    assert [float(said.group(1)), float(said.group(2))] == pytest.approx([min(lows), max(lows)], abs=0.05), lows


def trials_of(name):
    """The fine-tunings stored beside a record (bench/ladder_trials.py), one dict per line."""
    path = FIGURES / name.replace(".json", "-trials.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("name", ["experiment-ladder-first-rerun.json", "experiment-ladder-second-rerun.json"])
def test_the_stored_fine_tunings_are_the_ones_the_record_chose_among(name):
    """Every fine-tuning of every tuned run of a rerun is stored with its evaluations, and each is the one the
    run's record chose among: its best validation score and epoch are the record's for that rate, and its best
    evaluation is that score."""
    stored = record(name)
    tuned = [run for run in stored["runs"] if "trials" in run["metrics"]]
    if not tuned and name != "experiment-ladder-first-rerun.json":
        pytest.skip(f"{name} holds no fine-tuning yet")
    trials = {(line["arm"], line["seed"], line["learning_rate"]): line for line in trials_of(name)}
    expected = set()
    for run in tuned:
        for summary in run["metrics"]["trials"]:
            key = (run["arm"], run["seed"], summary["learning_rate"])
            expected.add(key)
            line = trials[key]
            assert line["best_epoch"] == summary["best_epoch"], key
            assert max(accuracy for _, _, accuracy in line["history"]) == summary["validation_accuracy"], key
            assert line["history"][-1][0] == line["epochs"], key  # the last epoch is always evaluated
    assert expected == set(trials) and len(expected) == 3 * len(tuned)


def test_what_the_docs_say_of_random_weights_memorising_doc_pairs_is_the_stored_fine_tunings():
    """"In each of the n fine-tunings the training loss fell from about 0.69 (ln 2) to X or less", with the
    epochs they were given, against the stored evaluations of random weights on doc-pairs at 100 a class."""
    section = ladder_section().replace("\n", " ")
    paragraph = section[section.index("**Fine-tuned at 100 a class, doc-pairs"):]
    said = re.search(r"given (\d+) epochs .*? in each of the (\d+) fine-tunings the training loss fell from about "
                     r"(0\.\d\d) \(ln 2\) to (\d\.\d+) or less", paragraph)
    lines = [line for line in trials_of("experiment-ladder-first-rerun.json")
             if line["arm"] == "random-doc-pairs-finetune-100"]
    assert {line["epochs"] for line in lines} == {int(said.group(1))}
    assert int(said.group(2)) == len(lines)
    first = [line["history"][0][1] for line in lines]
    assert float(said.group(3)) == pytest.approx(np.log(2), abs=0.005)
    assert max(abs(loss - np.log(2)) for loss in first) < 0.02, first  # "about ln 2": where training starts
    last = max(line["history"][-1][1] for line in lines)
    assert last <= float(said.group(4)) < last + 0.001, last  # "or less": the bound holds, and is the tight one


def test_what_the_docs_say_of_the_pretrained_rungs_on_doc_pairs_is_the_record():
    """The doc-pairs paragraph at 100 a class: each "mean [low, high]" it gives is a fine-tuned doc-pairs cell of
    the first rerun, whole; the pretrained mini rungs' fine-tunings all end at or under the training loss it
    says; and the runs that pass the "learned" bar score on test what it says."""
    section = ladder_section().replace("\n", " ")
    start = section.index("**Fine-tuned at 100 a class, doc-pairs")
    paragraph = section[start:section.index("  ", start)]
    stored = record("experiment-ladder-first-rerun.json")
    fine_tuned = [run for run in stored["runs"] if parse_arm(run["arm"])[1:] == ("doc-pairs", "finetune", "100")]
    _, cells = figures_of({**stored, "runs": fine_tuned})
    said = [tuple(float(value) for value in triple)
            for triple in re.findall(rf"({NUMBER}) \[({NUMBER}), ({NUMBER})\]", paragraph)]
    assert len(said) >= 3 and [triple for triple in said if triple not in cells] == [], (said, cells)
    ending = re.search(r"every one of their (\d+) fine-tunings ending with a training loss of (\d\.\d+) or less",
                       paragraph)
    pretrained = [line for line in trials_of("experiment-ladder-first-rerun.json")
                  if line["arm"].endswith("-doc-pairs-finetune-100") and line["arm"].split("-")[0] in
                  ("15min", "60min", "60min_large")]
    assert int(ending.group(1)) == len(pretrained)
    last = max(line["history"][-1][1] for line in pretrained)
    assert last <= float(ending.group(2)) < last + 0.001, last
    learned = sorted(run["metrics"]["accuracy"] for rung in ("15min", "60min", "60min_large")
                     for run in runs_of(stored, rung, "doc-pairs", "finetune", "100") if run["metrics"]["learned"])
    scores = re.search(rf"(\w+) of their runs pass the \"learned\" bar .*? score ({NUMBER}), ({NUMBER}) and "
                       rf"({NUMBER}) on test", paragraph)
    assert scores.group(1) == {3: "Three"}.get(len(learned)), learned
    assert [float(scores.group(k)) for k in (2, 3, 4)] == pytest.approx(learned, abs=0.05), learned


def test_every_run_of_a_stored_protocol_record_holds_together():
    """A referee's reading of each stored record made with the protocol, run by run: its accuracy is the share
    of test examples it says it got right; a fine-tuning's rate is the best of its trials on validation, and
    the validation score it carries is that trial's; `learned` is plateau.py's bar on that score; and each run
    says where it was chosen and where scored."""
    checked = 0
    for path in sorted(FIGURES.glob("experiment-ladder*.json")):
        stored = record(path.name)
        if "protocol" not in stored["settings"]:
            continue
        for run in stored["runs"]:
            metrics, where = run["metrics"], (path.name, run["arm"], run["seed"])
            assert (metrics["selected_on"], metrics["reported_on"]) == ("validation", "test"), where
            right = unpack_correct(metrics["test_correct"], metrics["test_examples"])
            assert metrics["accuracy"] == pytest.approx(100 * right.mean()), where
            if "trials" in metrics:
                scores = {trial["learning_rate"]: trial["validation_accuracy"] for trial in metrics["trials"]}
                assert scores[metrics["chosen"]["learning_rate"]] == max(scores.values()), where
                assert metrics["validation_accuracy"] == max(scores.values()), where
            rows = stored["provenance"]["tasks"][parse_arm(run["arm"])[1]]["rows"]["validation.tsv"]
            chance = stored["settings"]["validation_per_class"] / rows  # each label as often in validation
            bar = 100 * (chance + chance_margin(chance, rows))
            assert metrics["learned"] == (metrics["validation_accuracy"] > bar), where
            checked += 1
    assert checked >= 165 + 12


# Each rerun's record -> the opening of the paragraph that gives its checkpoints' held-out figures
CHECKPOINT_PARAGRAPHS = {"experiment-ladder-first-rerun.json": "The first rerun's checkpoints were made again",
                         "experiment-ladder-second-rerun.json": "The second rerun's checkpoints",
                         "experiment-ladder.json": "The third rerun's checkpoints"}


def test_the_rerun_checkpoints_logs_are_stored_and_give_the_docs_figures():
    """Each pretrained checkpoint a stored record of the protocol pins has its pretraining log in
    docs/figures/experiment-ladder-checkpoints (item 4 of issue 52), ending where its run ended: named by the
    weights' sha256 the record holds, or, for a checkpoint kept whole there, in its folder beside weights
    whose sha256 is the record's; and the held-out MLM and NSP the docs give for each rerun's checkpoints
    (15 minutes, the hour, the hour on pydocs-large, in that order) are those logs' last evaluations."""
    section = ladder_section()
    checked = []
    for path in sorted(FIGURES.glob("experiment-ladder*.json")):
        logs = {}
        for rung, pinned in record(path.name).get("provenance", {}).get("checkpoints", {}).items():
            if pinned.get("log") is None:
                continue
            folder = ROOT / pinned["folder"]
            if folder.is_relative_to(FIGURES):  # the checkpoint itself is kept: its weights, vocabulary and log
                weights = (folder / pinned["weights"]).read_bytes()
                assert hashlib.sha256(weights).hexdigest() == pinned["sha256"], (path.name, rung)
                logs[rung] = folder / "log.jsonl"
            else:  # only its log is kept, named by the weights' hash
                logs[rung] = FIGURES / "experiment-ladder-checkpoints" / pinned["log"].rsplit("/", 1)[1]
                assert logs[rung].name == f"{rung}-{pinned['sha256'][:12]}-log.jsonl", (path.name, rung)
        if not logs:
            continue
        assert sorted(logs) == ["15min", "60min", "60min_large"], path.name
        last = {}
        for rung, log in logs.items():
            entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
            assert entries[-1]["kind"] == "end" and entries[-1]["stopped"] == "finished", rung
            last[rung] = [entry for entry in entries if entry["kind"] == "eval"][-1]
            assert last[rung]["step"] == entries[-1]["total_steps"], rung
        if path.name not in CHECKPOINT_PARAGRAPHS:  # a budget's edge, made on a rerun's runs: its pins are that rerun's
            pins = record(path.name)["provenance"]["checkpoints"]
            reruns = [record(name)["provenance"]["checkpoints"] for name in CHECKPOINT_PARAGRAPHS
                      if (FIGURES / name).is_file()]
            assert any(all(rerun.get(rung) == pin for rung, pin in pins.items()) for rerun in reruns), path.name
            continue
        paragraph = section[section.index(CHECKPOINT_PARAGRAPHS[path.name]):]
        paragraph = paragraph[:paragraph.index("\n\n")].replace("\n", " ")
        said = re.findall(rf"held-out MLM ({NUMBER})%, NSP ({NUMBER})%", paragraph)
        assert [(float(mlm), float(nsp)) for mlm, nsp in said] == [
            pytest.approx((100 * last[rung]["mlm_accuracy"], 100 * last[rung]["nsp_accuracy"]), abs=0.05)
            for rung in ("15min", "60min", "60min_large")], path.name
        checked.append(path.name)
    assert "experiment-ladder-first-rerun.json" in checked, checked


def test_the_second_reruns_checkpoint_free_probes_repeat_the_first_reruns():
    """Random weights and MiniLM need no checkpoint of the reruns' own: the docs say the second rerun's probes of
    them give the first rerun's test scores again, to the hundredth, on another machine. Every such probe in both
    records is compared; a pretrained rung's probe, whose checkpoint is new, must not all agree (else the
    checkpoints are not new)."""
    assert "every probe of random weights and of MiniLM gives the first rerun's test score again, to the hundredth" \
        in ladder_section().replace("\n", " ")
    second = FIGURES / "experiment-ladder-second-rerun.json"
    if not second.is_file():
        pytest.skip("the second rerun's record is not stored yet")
    first = {(run["arm"], run["seed"]): run["metrics"]["accuracy"]
             for run in record("experiment-ladder-first-rerun.json")["runs"]}
    same, pretrained = [], []
    for run in record(second.name)["runs"]:
        rung, _, way, _ = parse_arm(run["arm"])
        if way != "probe" or (run["arm"], run["seed"]) not in first:
            continue
        (same if rung in ("random", "minilm") else pretrained).append(
            (run["arm"], run["seed"], run["metrics"]["accuracy"], first[(run["arm"], run["seed"])]))
    assert len(same) >= 72, len(same)
    assert [probe for probe in same if abs(probe[2] - probe[3]) >= 0.005] == []
    assert any(abs(probe[2] - probe[3]) >= 0.005 for probe in pretrained)


def what_held():
    """The docs' list of what held when the probes were made again (its lines joined), and the two reruns'
    records, first and second."""
    second = FIGURES / "experiment-ladder-second-rerun.json"
    if not second.is_file():
        pytest.skip("the second rerun's record is not stored yet")
    section = ladder_section()
    start = section.index("What held when every probe was made again")
    text = section[start:section.index("\n\n", section.index("\n- ", start))].replace("\n ", "")
    return text, [record("experiment-ladder-first-rerun.json"), record(second.name)]


def trial_scores(trials):
    """Each fine-tuning's rate, best epoch and validation score: what a rerun repeats (its warning's words may
    have changed between the two)."""
    return [(trial["learning_rate"], trial["best_epoch"], trial["validation_accuracy"]) for trial in trials]


def test_what_the_docs_say_held_in_the_second_rerun_is_the_two_records():
    """The list of what held when the probes were made again: each "figure [low, high]" is a cell of one of the
    two reruns, whole; the count of 15 minutes' gains clear of zero at 30 and 100 a class in each; and how far
    the two reruns' pretrained rungs' probes lie apart, on average and at most, with the cell that is furthest."""
    text, records = what_held()
    triples = set().union(*(figures_of(stored)[1] for stored in records))
    said = re.findall(rf"({NUMBER}) \[({NUMBER}), ({NUMBER})\]", text)
    assert len(said) >= 4 and [t for t in said if tuple(float(value) for value in t) not in triples] == [], said
    first, again = (ladder_cells(stored) for stored in records)
    topics = ("package-topics", "dependency-topics")
    clear = [sum(cells[(task, "probe", size, "15min")].gain_interval[0] > 0
                 for task in topics for size in ("30", "100")) for cells in (first, again)]
    counts = re.search(r"the first rerun had (\w+) cells just\s+clear of zero; here (\w+) is", text)
    words = {1: "one", 2: "two", 3: "three", 4: "four"}
    assert (counts.group(1), counts.group(2)) == (words[clear[0]], words[clear[1]]), clear
    apart = {key: abs(cell.mean - first[key].mean) for key, cell in again.items()
             if key[3] not in ("random", "minilm") and key[1] == "probe" and key in first}
    furthest = max(apart, key=apart.get)
    spread = re.search(rf"differ by ({NUMBER}) points a cell on average and by up to ({NUMBER}) \(the hour on "
                       rf"([\w-]+) with all the examples, ({NUMBER}) against ({NUMBER})\)", text)
    assert float(spread.group(1)) == pytest.approx(np.mean(list(apart.values())), abs=0.05), spread.group()
    assert float(spread.group(2)) == pytest.approx(apart[furthest], abs=0.05), spread.group()
    assert furthest == (spread.group(3), "probe", "all", "60min"), furthest
    assert [float(spread.group(4)), float(spread.group(5))] == pytest.approx(
        [first[furthest].mean, again[furthest].mean], abs=0.05)


def test_what_the_docs_say_of_the_second_reruns_fine_tunings_is_the_two_records():
    """The same list, of the fine-tunings: the ones that need no checkpoint of a rerun's own (random weights,
    MiniLM) repeat the first rerun's choices and test answers, with as few fine-tunings differing on validation
    as it says; three times the text is within the test set's noise of the hour in both reruns; and the rates
    the pretrained rungs chose."""
    text, records = what_held()
    # random weights and MiniLM fine-tuned on package-topics: the same choices and test answers, and how few of
    # their fine-tunings differ at all on validation (at which rate, by how much)
    before = {(run["arm"], run["seed"]): run["metrics"] for run in records[0]["runs"]}
    gaps = {}
    for rung in ("random", "minilm"):
        tuned = [(run["metrics"], before[(run["arm"], run["seed"])]) for run in records[1]["runs"]
                 if run["arm"] == arm_name(rung, "package-topics", "finetune", "100")]
        assert len(tuned) == 3 and all(now["chosen"] == then["chosen"] and now["test_correct"] == then["test_correct"]
                                       for now, then in tuned), rung
        # validation has 300 sentences: scores move in steps of a third of a point
        gaps[rung] = sorted((trial["learning_rate"],
                             round(3 * abs(trial["validation_accuracy"] - old["validation_accuracy"])) / 3)
                            for now, then in tuned for trial, old in zip(now["trials"], then["trials"], strict=True)
                            if trial["validation_accuracy"] != old["validation_accuracy"])
    said = re.search(r"Of each one's nine fine-tunings (\w+) differ at all on\s+validation, all four at 1e-3, the "
                     r"largest rate: random weights' by a third of a point, MiniLM's by a third\s+and by one point",
                     text)
    assert said and said.group(1) == "two", text
    assert gaps == {"random": [(1e-3, 1 / 3)] * 2, "minilm": [(1e-3, 1 / 3), (1e-3, 1.0)]}, gaps
    # random weights on doc-pairs: every evaluation of every fine-tuning the same, and nothing learned
    assert "Random weights on doc-pairs repeat to the last evaluation" in text
    pairs = [(run["metrics"], before[(run["arm"], run["seed"])]) for run in records[1]["runs"]
             if run["arm"] == arm_name("random", "doc-pairs", "finetune", "100")]
    assert len(pairs) == 3 and all(trial_scores(now["trials"]) == trial_scores(then["trials"]) and not now["learned"]
                                   and now["test_correct"] == then["test_correct"] for now, then in pairs)
    # three times the text against the hour at 100 a class: the difference's interval holds zero in both reruns,
    # in every probe and fine-tuned on package-topics
    assert "holds zero in every probe, and fine-tuned on package-topics, in both reruns" in text
    for stored in records:
        for task, way in [(task, "probe") for task in stored["settings"]["tasks"]] + [("package-topics", "finetune")]:
            large, hour = (correct(runs_of(stored, rung, task, way, "100")) for rung in ("60min_large", "60min"))
            low, high = bootstrap_interval(large, hour, documents_of_test_rows(stored, task))
            assert low < 0 < high, (task, way, low, high)
    # the rate the pretrained rungs chose there, in the second rerun
    pretrained = [arm_name(rung, "package-topics", "finetune", "100") for rung in ("15min", "60min", "60min_large")]
    chosen = [run["metrics"]["chosen"]["learning_rate"] for run in records[1]["runs"] if run["arm"] in pretrained]
    said = re.search(r"chose 1e-3, the budget's largest\s+rate, in (\d) of their (\d) runs", text)
    assert said and (int(said.group(1)), int(said.group(2))) == (chosen.count(1e-3), len(chosen)), chosen
