"""Did fine-tuning learn anything? The plateau at chance, how to avoid it, and how to say so.

A fine-tuning run can end exactly where it began: the dev metric at what a model that learned nothing
scores (always the majority label, no entity found), the training loss flat at ln(number of labels).
Mosbach et al. (2021, "On the Stability of Fine-tuning BERT") trace such failed runs to an optimisation
plateau early in training, and find that more steps, not a different seed, get out of it. So the default
number of epochs gives a small training set enough steps, and a run that still ends at chance says so.
"""

# Measured on the synthetic sentiment set (2,000 sentences, 63 steps of 32 per epoch), `tiny` encoders
# at their default learning rate: a random encoder and one pretrained for 100 steps sit at ln 2 for
# 150-300 steps and then leave within an epoch (5 seeds); the paper's 3 epochs are 189 steps, which ends
# most runs on the plateau, because the linear decay has brought the rate to 0 by then.

import math

MIN_STEPS = 500  # the default epochs give at least this many optimizer steps (from the plateau above)
MAX_EPOCHS = 20  # ... but no more epochs than Mosbach et al.'s setting for their smallest sets


def default_epochs(steps_per_epoch, min_steps=MIN_STEPS, max_epochs=MAX_EPOCHS):
    """The paper's 3 epochs, or more when 3 epochs of this set are fewer than `min_steps` steps, up to
    `max_epochs` (an experiment's tuning budget may give more than the command's default)."""
    return min(max_epochs, max(3, math.ceil(min_steps / steps_per_epoch)))


def at_chance(task, dev_examples, best_metrics):
    """True when the best dev score is within two standard errors of the task's chance score; None when
    the task has none (question answering: no fixed guess to compare with)."""
    chance = task.chance(dev_examples)
    if chance is None:
        return None
    score, _ = chance
    return best_metrics[task.main_metric] <= score + chance_margin(score, len(dev_examples))


def chance_margin(chance, count):
    """How far above `chance` (a share) a score on `count` examples must be to say the model learned: two
    binomial standard errors of a score near chance, and at least 1 point."""
    return max(0.01, 2 * math.sqrt(max(chance * (1 - chance), 0.0025) / count))


def plateau_warning(task, dev_examples, result, learning_rate, first_losses):
    """One paragraph for the user when the run learned nothing; None when it did. What to try depends on the
    training loss: flat, the run sat on the plateau (more steps or a higher rate get it off); fallen, it
    memorised its few examples (more steps only memorise them better).

    first_losses: the training losses of the first steps, to tell whether the loss ever fell.
    """
    final_loss = result.history[-1]["train_loss"]
    loss_flat = final_loss >= 0.95 * float(sum(first_losses) / len(first_losses))
    chance = at_chance(task, dev_examples, result.best_metrics)
    if not (chance or (chance is None and loss_flat)):
        return None
    metric = task.main_metric
    if chance:
        score, meaning = task.chance(dev_examples)
        said = (f"the best dev {metric}, {result.best_metrics[metric]:.4f}, is no better than {meaning} "
                f"({score:.4f})")
    else:
        said = f"the training loss did not fall ({final_loss:.4f} at the end)"
    epochs = result.history[-1]["epoch"]  # the last epoch is always evaluated; others may not be
    if not loss_flat:  # the loss fell while dev stayed at chance: it learned its examples, not the task
        return (f"warning: {said}, while the training loss fell to {final_loss:.4f}: the model fit its training "
                "examples without learning anything that carries to new ones. More labelled examples or a "
                f"checkpoint pretrained for longer can help; more epochs (this run: {epochs}) would only fit "
                "them further.")
    return (f"warning: {said}; the model learned nothing from this task. Small or briefly pretrained "
            f"encoders sit on such a plateau for a few hundred steps. Try more epochs (this run: "
            f"{epochs}), a higher learning rate (this run: {learning_rate:g}), or a "
            "checkpoint pretrained for longer.")
