"""The ladder's numbers as docs/experiments.md and lesson 22 give them: for each task, way, size and rung, the
mean over the seeds, their spread, and the points over random weights.

Two kinds of stored record are read. One made before the protocol of ladder_tuning.py (its settings name no
`protocol`, as docs/figures/experiment-ladder-before-protocol.json) reports dev accuracy chosen on dev: its cells
are `mean ± std (gain)`. One made with the protocol reports test accuracy: its cells add the bootstrap
interval over the test set (bootstrap.py), of the score and of the gain, and say when runs learned nothing;
no gain is reported against an arm with such a run. The test set is resampled document by document when the
record holds its documents (results.json's provenance, from each task's splits.json), else example by example.
What the runs cost is read from the records too: each run's own seconds (`cost_table`).
"""

from dataclasses import dataclass

import numpy as np

from minibert.experiments.bootstrap import bootstrap_interval, unpack_correct, unpack_documents
from minibert.experiments.ladder_arms import RUNGS, WAYS, parse_arm
from minibert.experiments.summary import summarize


@dataclass(frozen=True)
class Cell:
    mean: float
    std: float | None  # over the seeds; None with one seed
    n: int
    learned: int  # how many of the n runs learned something (n for a record made before the protocol)
    interval: tuple | None = None  # the bootstrap's 95% interval of the mean, over the test set
    gain: float | None = None  # points over random weights, when both arms' runs all learned
    gain_interval: tuple | None = None


def with_protocol(record):
    """Whether `record` was made with the validation/test protocol (else: chosen and reported on dev)."""
    return "protocol" in record["settings"]


def correct_matrix(runs):
    """(seeds, N) booleans: which test examples each run got right."""
    return np.array([unpack_correct(run["metrics"]["test_correct"], run["metrics"]["test_examples"])
                     for run in runs])


def documents_of_test_rows(record, task):
    """The (N, 1) or (N, 2) documents of `task`'s test rows, as the record's provenance holds them; None when
    it holds none (each example then resampled on its own)."""
    packed = record.get("provenance", {}).get("tasks", {}).get(task, {}).get("test_documents")
    return None if packed is None else unpack_documents(packed)


def ladder_cells(record):
    """{(task, way, size, rung): Cell} of every arm with finished runs."""
    runs_of = {}
    for run in record["runs"]:
        rung, task, way, size = parse_arm(run["arm"])
        runs_of.setdefault((task, way, size, rung), []).append(run)
    protocol = with_protocol(record)
    cells = {}
    for key, runs in runs_of.items():
        summary = summarize([run["metrics"]["accuracy"] for run in runs])
        learned = sum(run["metrics"].get("learned", True) for run in runs)
        documents = documents_of_test_rows(record, key[0])
        cells[key] = Cell(summary.mean, summary.std, summary.n, learned,
                          bootstrap_interval(correct_matrix(runs), documents=documents) if protocol else None)
    for (task, way, size, rung), cell in list(cells.items()):
        base_key = (task, way, size, "random")
        base = cells.get(base_key)
        if rung == "random" or base is None or base.learned < base.n or cell.learned < cell.n:
            continue  # no gain against a run that learned nothing, nor of one
        gain_interval = (bootstrap_interval(correct_matrix(runs_of[(task, way, size, rung)]),
                                            correct_matrix(runs_of[base_key]), documents_of_test_rows(record, task))
                         if protocol else None)
        cells[(task, way, size, rung)] = Cell(cell.mean, cell.std, cell.n, cell.learned, cell.interval,
                                              cell.mean - base.mean, gain_interval)
    return cells


def cell_text(cell):
    """One table cell: `53.7 ± 4.4 (+2.0)`; with the protocol `53.7 ± 4.4 [50.1, 57.2] (+2.0 [-1.0, 5.1])`, and
    `, learned nothing in 2 of 3` when runs did not leave chance."""
    text = f"{cell.mean:.1f}" + (f" ± {cell.std:.1f}" if cell.std is not None else "")
    if cell.interval is not None:
        text += f" [{cell.interval[0]:.1f}, {cell.interval[1]:.1f}]"
    if cell.gain is not None:
        between = f" [{cell.gain_interval[0]:+.1f}, {cell.gain_interval[1]:+.1f}]" if cell.gain_interval else ""
        text += f" ({cell.gain:+.1f}{between})"
    if cell.learned < cell.n:
        text += f", learned nothing in {cell.n - cell.learned} of {cell.n}"
    return text


def markdown_tables(record):
    """{task: its markdown table}: a row per way and size, a column per rung, as docs/experiments.md has them."""
    cells, settings = ladder_cells(record), record["settings"]
    rungs = [rung for rung in settings["rungs"] if any(key[3] == rung for key in cells)]
    tables = {}
    for task in settings["tasks"]:
        lines = ["| way, a class | " + " | ".join(RUNGS[rung] for rung in rungs) + " |",
                 "|---|" + "---|" * len(rungs)]
        for way in WAYS:
            for size in settings["sizes"]:
                row = [cells.get((task, way, size, rung)) for rung in rungs]
                if any(row):
                    lines.append(f"| {WAYS[way]}, {size} | "
                                 + " | ".join(cell_text(cell) if cell else "" for cell in row) + " |")
        tables[task] = "\n".join(lines)
    return tables


def cost_table(record):
    """The markdown table of what `record`'s runs took, from each run's own `seconds`: a row per way, the mini
    rungs apart from MiniLM (6 layers of width 384 against 4 of 256), and runs apart by the threads they ran on
    (a record made before runs named theirs says "not recorded"); a run's median and range, and the hours of
    all of them. Medians, so that a run slowed by other work on the machine does not set the figure."""
    groups = {}
    for run in record["runs"]:
        rung, _, way, _ = parse_arm(run["arm"])
        groups.setdefault((way, rung == "minilm", run.get("threads")), []).append(run["seconds"])
    def order(group):  # the ways as WAYS has them, the mini rungs first, then by threads
        way, minilm, threads = group
        return list(WAYS).index(way), minilm, threads or 0

    lines = ["| way | rungs | threads | runs | seconds a run: median (range) | hours, all runs |",
             "|---|---|---|---:|---|---:|"]
    for way, minilm, threads in sorted(groups, key=order):
        seconds, rungs = groups[(way, minilm, threads)], RUNGS["minilm"] if minilm else "the mini rungs"
        lines.append(f"| {WAYS[way]} | {rungs} | {threads or 'not recorded'} | {len(seconds)} | "
                     f"{np.median(seconds):.0f} ({min(seconds):.0f}-{max(seconds):.0f}) | {sum(seconds) / 3600:.1f} |")
    return "\n".join(lines)
