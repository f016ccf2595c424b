"""A run's report: report.html, one page to open in a browser at any time, and report.json, the same data
for scripts, both in the run folder and both rewritten at each evaluation.

For pretraining (`write_pretrain_report`) the page draws the curves of the log (masked-LM loss and accuracy,
train and held-out, NSP accuracy, learning rate, gradient norm, tokens per second) with the unigram baseline,
a table of what the model guesses for a few held-out blanks at each evaluation, so that one watches "the the
the" turn into words, and the run's configuration, CPU, command and times. Fine-tuning's report is built in
minibert/finetune/report.py and written by `write_report` here.

Each file is written to a temporary name and renamed over the old one (minibert/io/atomic.py), so a page
opened mid-run is always a whole one: the previous evaluation's or this one's.

At each evaluation the pretraining loop logs the guesses, then rewrites the report (`PretrainingRun.log_guesses`
and `PretrainingRun.write_report` in pretraining_run.py):

    log.write("guesses", step=step, **blanks_snapshot(model, tokenizer, eval_batches, config.eval_batches))
    write_pretrain_report(run_dir, read_log(log.path))

and once more at the end of the run, after the "end" record: `write_pretrain_report(run_dir, records)`.
"""

# The unigram baseline is what a model that ignores the context can reach: always guessing the held-out
# blanks' most common token (accuracy), or their token frequencies (loss: the entropy of that distribution).
# A fresh BERT first learns exactly this, and the curves sit on it for a while: "the plateau" of
# docs/learning.md. Leaving the line is the sign that the model reads the context.

from collections import Counter
from itertools import islice
from pathlib import Path

import numpy as np

from minibert.cpu import describe_cpu
from minibert.io.atomic import atomic_write
from minibert.train.checkpointing import remove_partial_files
from minibert.train.guesses import held_out_blanks
from minibert.train.logs import SESSION_KINDS
from minibert.viz.html_page import html_page, page_json

REPORT_PAGE = "report.html"
REPORT_DATA = "report.json"
EXAMPLES = 4  # held-out sequences in the guesses table
# The figures of a "train" or "eval" record the page draws; the rest of a record stays in log.jsonl.
TRAIN_FIELDS = ("step", "loss", "mlm_loss", "nsp_loss", "mlm_accuracy", "nsp_accuracy", "lr", "grad_norm",
                "tokens_per_second", "seq_length", "elapsed")
EVAL_FIELDS = ("step", "mlm_loss", "mlm_accuracy", "nsp_loss", "nsp_accuracy", "elapsed")


def blanks_snapshot(model, tokenizer, eval_batches, max_batches=None):
    """A "guesses" log record's fields: the model's top 3 guesses for the blanks of the first held-out
    sequences (the same ones at every evaluation), and the unigram baseline of the held-out blanks."""
    first_batch = next(eval_batches.epoch(0))
    return {"examples": held_out_blanks(model, tokenizer, first_batch, count=EXAMPLES),
            "unigram": unigram_baseline(islice(eval_batches.epoch(0), max_batches), tokenizer)}


def unigram_baseline(batches, tokenizer):
    """{"accuracy", "loss", "token"}: always guessing the most common masked token (which is "token"), and
    the entropy (nats) of the masked tokens' frequencies, over the masked positions of `batches`."""
    counts = Counter()
    for batch in batches:
        chosen = np.asarray(batch["masked_lm_weights"]) > 0
        counts.update(np.asarray(batch["masked_lm_ids"])[chosen].tolist())
    if not counts:
        return None
    frequencies = np.array(list(counts.values()), dtype=np.float64) / sum(counts.values())
    token, count = counts.most_common(1)[0]
    return {"accuracy": count / sum(counts.values()), "loss": float(-(frequencies * np.log(frequencies)).sum()),
            "token": tokenizer.ids_to_tokens[int(token)]}


def write_pretrain_report(run_dir, records):
    """Rewrite report.json and report.html in `run_dir` from the run's log records (`read_log`)."""
    write_report(run_dir, pretrain_report_data(Path(run_dir), records))


def pretrain_report_data(run_dir, records):
    """The data of a pretraining run's page: a dict of plain values (what report.json holds)."""
    sessions = [record for record in records if record["kind"] in ("start", "resume")]
    guesses = [record for record in records if record["kind"] == "guesses"]
    first = sessions[0] if sessions else {}
    return {
        "kind": "pretrain",
        "title": f"pretraining: {run_dir.name}",
        "run": {**run_summary(run_dir, records), "parameters": first.get("parameters"),
                # the latest plan: a run timed by the clock plans its steps again as it goes
                "total_steps": next((record["total_steps"] for record in reversed(records)
                                     if record.get("total_steps") is not None), None)},
        "config": first.get("config", {}),
        "model": first.get("model", {}),
        "train": [_pick(record, TRAIN_FIELDS) for record in records if record["kind"] == "train"],
        "eval": [_pick(record, EVAL_FIELDS) for record in records if record["kind"] == "eval"],
        "unigram": guesses[-1].get("unigram") if guesses else None,
        "guesses": [{"step": record["step"], "examples": record["examples"]} for record in guesses],
    }


def run_summary(run_dir, records):
    """What the report says of a run besides its figures: folder, CPU, its sessions (when each started, with
    what command), the last step, and how and when it ended ("running" while it has not)."""
    sessions = [record for record in records if record["kind"] in ("start", "resume")]
    marks = [record for record in records if record["kind"] in SESSION_KINDS]
    finished = bool(marks) and marks[-1]["kind"] == "end"  # a resumed run is running again
    return {"folder": Path(run_dir).name, "cpu": describe_cpu(),
            "step": max((record.get("step", 0) for record in records), default=0),
            "status": marks[-1].get("stopped", "finished") if finished else "running",
            "sessions": [{"kind": record["kind"], "step": record.get("step"), "time": record.get("time"),
                          "command": record.get("command")} for record in sessions],
            "ended": marks[-1].get("time") if finished else None}


def write_report(run_dir, data):
    """report.json, then report.html (data embedded), each written whole and renamed into place."""
    run_dir = Path(run_dir)
    for name in (REPORT_DATA, REPORT_PAGE):  # what a process killed mid-write left behind
        remove_partial_files(run_dir, name)
    with atomic_write(run_dir / REPORT_DATA) as file:
        file.write((page_json(data) + "\n").encode("utf-8"))
    with atomic_write(run_dir / REPORT_PAGE) as file:
        file.write(html_page("report", data["title"], data).encode("utf-8"))


def _pick(record, fields):
    return {field: record.get(field) for field in fields}
