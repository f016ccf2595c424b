"""The ladder's protocol: one recipe and one small tuning budget for every rung, every choice made on the
validation split, and the test split scored once per run, by the model chosen.

A baseline given less tuning than the models it is compared with measures the tuning, not the pretraining:
BERT's miniatures (Turc et al. 2019) and Cramming (Geiping and Goldstein 2022) give their no-pretraining
baselines the same search as the pretrained models, and Dodge et al. (2020) ask that the budget be said. So
each fine-tuning run here is a few fine-tunings, one per learning rate of TUNING, each long enough to leave
the plateau that `finetune/plateau.py` describes (Mosbach et al. 2021: more steps, not another seed, get a
failed run off it); the learning rate and the epoch (the best one on validation) are chosen on the
validation split, and only the chosen model reads the test split. A run whose chosen model is no better than
chance on validation is recorded `learned: false`: no gain is reported against it.

Each learning rate's fine-tuning is saved as it ends (`trials/<arm>-seed<k>/`, with the finetune command's
output beside it), so a stopped run goes on at its next learning rate.
"""

import json
import math
from pathlib import Path

import numpy as np

from minibert.experiments.bootstrap import pack_correct
from minibert.experiments.ladder_tasks import read_rows
from minibert.finetune import FineTuneConfig
from minibert.finetune.finetuning_run import run_finetuning
from minibert.finetune.linear_probe import RIDGE_GRID, fit_chosen_on_held_out, predict
from minibert.finetune.plateau import chance_margin, default_epochs
from minibert.io.atomic import atomic_write

# The budget and the recipe, the same for every rung. Rates: the range Turc et al. searched for BERT-Mini and
# -Small (1e-4 to 3e-4 and above), and 1e-3, which small models from scratch may want; a real BERT's usual
# 5e-5 is left out, as the paper's range is for models four times MiniLM's width. Dropout: BERT's 0.1 on every
# layer (paper, appendix A.3), which MiniLM's config has and the mini rungs' (pretrained without it) do not.
# Evaluations: the epochs the validation split chooses among, spread over the run (every epoch of a 250-epoch
# run at 30 a class would cost more than its training).
TUNING = {"learning_rates": [1e-4, 3e-4, 1e-3], "min_steps": 500, "max_epochs": 100, "dropout": 0.1,
          "batch_size": 32, "evaluations": 20}
SELECTED_ON, REPORTED_ON = "validation", "test"
TRIALS_FOLDER = "trials"


def learned_something(accuracy, rows):
    """Whether an accuracy (a share) on `rows` (the validation split) is above what always answering the most
    common label scores, by more than its noise: plateau.py's test, which the finetune command's warning uses."""
    labels = [row[-1] for row in rows]
    chance = max(labels.count(label) for label in set(labels)) / len(labels)
    return accuracy > chance + chance_margin(chance, len(labels))


def outcome(validation_accuracy, validation_rows, correct, chosen):
    """A run's metrics: the test accuracy (%) of the model chosen on validation, which split did which, and
    the test examples it got right (for the bootstrap, bootstrap.py)."""
    return {"accuracy": 100 * float(np.mean(correct)), "validation_accuracy": 100 * validation_accuracy,
            "learned": learned_something(validation_accuracy, validation_rows), "selected_on": SELECTED_ON,
            "reported_on": REPORTED_ON, "chosen": chosen, "test_examples": len(correct),
            "test_correct": pack_correct(correct)}


def probe(features_of, files, train_rows, ridges=RIDGE_GRID):
    """The linear probe: a ridge classifier on the frozen features (`features_of`: rows -> (N, F)), its
    penalty chosen on validation among `ridges`, scored on test."""
    validation_rows, test_rows = read_rows(files.validation), read_rows(files.test)
    labels = sorted({row[-1] for row in train_rows})
    fitted, ridge, accuracy = fit_chosen_on_held_out(
        features_of(train_rows), [labels.index(row[-1]) for row in train_rows],
        features_of(validation_rows), [labels.index(row[-1]) for row in validation_rows], len(labels), ridges)
    guesses = predict(fitted, features_of(test_rows))
    correct = [labels[guess] == row[-1] for guess, row in zip(guesses, test_rows, strict=True)]
    return outcome(accuracy, validation_rows, correct, {"ridge": ridge})


def tuned_fine_tuning(start, files, train_path, seed, trial_dir, settings):
    """Fine-tune `start` ({"folder", "random_init", "recipe": FineTuneConfig fields, "task_options"}) once per
    learning rate of the budget (settings["tuning"]), choose the rate and epoch on validation, and score the
    chosen model on test; each rate's result is saved in `trial_dir` and found there by a resumed run."""
    budget, trial_dir = settings["tuning"], Path(trial_dir)
    trials, kept = {}, None  # kept: (rate, task, model) of the best fine-tuning made by this process
    for rate in budget["learning_rates"]:
        trials[rate] = read_trial(trial_dir, rate, settings)
        if trials[rate] is None:
            task, model, trials[rate] = fine_tune_once(start, files, train_path, seed, rate, trial_dir, settings)
            write_trial(trial_dir, rate, trials[rate])
            if kept is None or trials[rate]["validation_accuracy"] > trials[kept[0]]["validation_accuracy"]:
                kept = (rate, task, model)
    chosen = chosen_rate(trials)
    if kept is not None and kept[0] == chosen:
        task, model = kept[1:]
    else:  # its model was made before a stop: made again, the same seed giving the same weights
        task, model, _ = fine_tune_once(start, files, train_path, seed, chosen, trial_dir, settings)
    return tuned_outcome(trials, chosen, correct_on_test(task, model, files), read_rows(files.validation))


def chosen_rate(trials):
    """The learning rate ({rate: trial}) whose fine-tuning is best on validation; on a tie the smaller."""
    return max(trials, key=lambda rate: (trials[rate]["validation_accuracy"], -rate))


def correct_on_test(task, model, files):
    """Which test examples `model` gets right: the one time a run reads the test split."""
    features = task.encode(task.read(files.test))
    guesses = task.scores(model, features).argmax(axis=-1)
    return [int(guess) == feature["label"] for guess, feature in zip(guesses, features, strict=True)]


def tuned_outcome(trials, chosen, correct, validation_rows):
    """A tuned run's metrics (outcome): the chosen rate's fine-tuning scored on test (`correct`), and every
    trial's rate, best epoch and validation accuracy, so that the choice can be checked."""
    best = trials[chosen]
    metrics = outcome(best["validation_accuracy"] / 100, validation_rows, correct,
                      {"learning_rate": chosen, "epoch": best["best_epoch"], "epochs": best["epochs"]})
    return {**metrics, "warning": best["warning"],
            "trials": [{key: trial[key] for key in ("learning_rate", "best_epoch", "validation_accuracy", "warning")}
                       for trial in trials.values()]}


def fine_tune_once(start, files, train_path, seed, rate, trial_dir, settings):
    """One fine-tuning at learning rate `rate`, its output in `trial_dir`/lr<rate>.log; (task, model at its
    best validation epoch, the trial's record)."""
    budget = settings["tuning"]
    steps_per_epoch = math.ceil(len(read_rows(train_path)) / budget["batch_size"])
    epochs = default_epochs(steps_per_epoch, budget["min_steps"], budget["max_epochs"])
    config = FineTuneConfig(seed=seed, learning_rate=rate, epochs=epochs, dropout=budget["dropout"],
                            batch_size=budget["batch_size"], evaluations=budget["evaluations"], **start["recipe"])
    trial_dir.mkdir(parents=True, exist_ok=True)
    with open(trial_dir / f"lr{rate:g}.log", "w", encoding="utf-8") as stream:  # the command's own words, kept
        task, model, result = run_finetuning("glue-tsv", start["folder"], train=train_path, dev=files.validation,
                                             settings=config, random_init=start["random_init"],
                                             task_options=start["task_options"], stream=stream, log=None)
    trial = {"learning_rate": rate, "epochs": epochs, "best_epoch": result.best_epoch,
             "validation_accuracy": 100 * result.best_metrics["accuracy"], "warning": result.warning,
             "history": [{"epoch": entry["epoch"], "train_loss": entry["train_loss"],
                          "validation_accuracy": 100 * entry["dev"]["accuracy"]} for entry in result.history],
             "settings": settings}
    return task, model, trial


def trial_path(trial_dir, rate):
    return Path(trial_dir) / f"lr{rate:g}.json"


def read_trial(trial_dir, rate, settings):
    """The saved fine-tuning at `rate`, or None when there is none, it is damaged, or it was made with other
    settings (then it is made again)."""
    try:
        trial = json.loads(trial_path(trial_dir, rate).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    whole = isinstance(trial, dict) and trial.get("settings") == settings and trial.get("learning_rate") == rate
    return trial if whole and isinstance(trial.get("validation_accuracy"), float) else None


def write_trial(trial_dir, rate, trial):
    with atomic_write(trial_path(trial_dir, rate)) as file:
        file.write((json.dumps(trial, indent=1) + "\n").encode("utf-8"))

