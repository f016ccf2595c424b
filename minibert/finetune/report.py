"""A fine-tuning run's report (report.html and report.json in --out, rewritten after every epoch): the dev
metrics per epoch, the training loss, a confusion matrix of the dev set and a few dev examples the model gets
wrong. Written by `write_report` of minibert/train/report.py, which pretraining's report uses too.
"""

# The confusion matrix counts dev examples by (true label, predicted label): its diagonal is what accuracy
# counts, and its other cells say which labels the model mixes up. Token tagging (NER) counts words by tag.
# A regression (STS-B) and extractive QA have no labels to confuse, so they show their metrics alone.
# The page stays whole however large the run: the matrix shows the labels a reader can compare and sums the
# rest into one row and column, and an example is cut to what a table cell shows.

import numpy as np

from minibert.train.report import run_summary, write_report

MISTAKES = 8  # dev examples shown that the model gets wrong, the most confident first
MATRIX_LABELS = 20  # rows and columns of the confusion matrix at most, the last summing the labels left out
SHOWN_CHARACTERS = 300  # of a shown example's text, its label and its prediction; the rest is cut


def write_finetune_report(out_dir, task, model, dev_examples, dev_features, record, history, records, epoch):
    """Rewrite the report of the run in `out_dir`: `history` as the loop keeps it (per epoch: "epoch",
    "train_loss", "dev"), `records` the run's log, and the confusion matrix and mistakes of `model` as it is
    now, which is epoch `epoch`'s. Returns the report's data."""
    chance = task.chance(dev_examples)
    confusion, mistakes = dev_predictions(task, model, dev_examples, dev_features)
    best = max(history, key=lambda entry: entry["dev"][task.main_metric]) if history else None
    data = {
        "kind": "finetune",
        "title": f"fine-tuning: {record.get('task', task.kind)} from {record.get('model', '?')}",
        "run": {**run_summary(out_dir, records), "parameters": model.num_parameters(),
                "finished": any(r["kind"] == "end" for r in records)},
        "settings": {**{key: value for key, value in record.items() if key not in ("history", "settings")},
                     **record.get("settings", {})},
        "main_metric": task.main_metric,
        "epochs": [{"epoch": e["epoch"], "train_loss": e["train_loss"], "dev": e["dev"]} for e in history],
        "best_epoch": best["epoch"] if best else None,
        "chance": chance[0] if chance else None,
        "chance_label": f"chance ({chance[1]})" if chance else None,
        "train": [{"step": r["step"], "loss": r["loss"]} for r in records if r["kind"] == "train"],
        "predictions_epoch": epoch,
        "confusion": confusion,
        "mistakes": mistakes,
    }
    write_report(out_dir, data)
    return data


def write_ending(out_dir, data, records):
    """The report last written (`data`), again with how the run ended, from its log `records` (which end with
    the "end" record): a run stopped by Ctrl-C, a diverged step or an error between two epochs would
    otherwise leave a page that says "running" for good."""
    write_report(out_dir, {**data, "run": {**data["run"], **run_summary(out_dir, records), "finished": True}})


def dev_predictions(task, model, examples, features):
    """(confusion, mistakes) on the dev set: {"labels", "counts" (true x predicted)} and up to MISTAKES
    wrong answers {"text", "label", "predicted", "confidence"}; (None, None) for a task without labels."""
    if task.kind == "classification" and not task.regression:
        probabilities = task.scores(model, features)  # (N, C)
        gold = np.array([feature["label"] for feature in features])
        predicted = probabilities.argmax(axis=-1)
        texts = [example.text_a if example.text_b is None else f"{example.text_a} ‖ {example.text_b}"
                 for example in examples]
        wrong = np.flatnonzero(predicted != gold)
        wrong = wrong[np.argsort(-probabilities[wrong, predicted[wrong]], kind="stable")][:MISTAKES]
        mistakes = [{"text": shortened(texts[i]), "label": shortened(task.labels[gold[i]]),
                     "predicted": shortened(task.labels[predicted[i]]),
                     "confidence": float(probabilities[i, predicted[i]])} for i in wrong]
        return confusion_matrix(task.labels, gold, predicted), mistakes
    if task.kind == "tagging":
        predicted_tags = task.predict_tags(model, features)
        labels = list(task.labels)
        number = {tag: index for index, tag in enumerate(labels)}
        gold = [number[tag] for sentence in examples for tag in sentence.tags]
        predicted = [number[tag] for tags in predicted_tags for tag in tags]
        mistakes = [{"text": shortened(" ".join(sentence.words)), "label": shortened(" ".join(sentence.tags)),
                     "predicted": shortened(" ".join(tags)), "confidence": None}
                    for sentence, tags in zip(examples, predicted_tags, strict=True) if tags != sentence.tags]
        return confusion_matrix(labels, np.array(gold), np.array(predicted)), mistakes[:MISTAKES]
    return None, None


def confusion_matrix(labels, gold, predicted):
    """{"labels", "counts", "others"}: counts[i][j] = how many with true label i the model called j. Past
    MATRIX_LABELS labels, those with the most dev examples (true or predicted) are shown and the `others`
    left out are counted together as the last label; `others` is 0 when none were left out."""
    gold, predicted = np.asarray(gold, dtype=np.int64), np.asarray(predicted, dtype=np.int64)
    examples = np.bincount(gold, minlength=len(labels)) + np.bincount(predicted, minlength=len(labels))
    if len(labels) <= MATRIX_LABELS:
        shown = np.arange(len(labels))
    else:  # never the whole labels x labels matrix: it grows as the square of the labels
        shown = np.sort(np.argsort(-examples, kind="stable")[:MATRIX_LABELS - 1])  # in the task's label order
    others = len(labels) - len(shown)
    row = np.full(len(labels), len(shown))  # each label's row (and column): its own, or the others' last one
    row[shown] = np.arange(len(shown))
    size = len(shown) + (1 if others else 0)
    counts = np.zeros((size, size), dtype=np.int64)
    np.add.at(counts, (row[gold], row[predicted]), 1)
    names = [shortened(labels[index]) for index in shown] + ([f"({others} other labels)"] if others else [])
    return {"labels": names, "counts": counts.tolist(), "others": others}


def shortened(text):
    """`text` cut to SHOWN_CHARACTERS, with "…" where it was cut."""
    return text if len(text) <= SHOWN_CHARACTERS else text[:SHOWN_CHARACTERS - 1] + "…"
