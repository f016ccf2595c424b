"""The feature-based approach: a frozen encoder's vectors, and a linear classifier trained on them alone.

The paper (§5.3, Table 7) also uses BERT without fine-tuning: the encoder's activations are fixed features
for a task model trained on top, as ELMo's are. Here the task model is the simplest there is, a linear
classifier: a ridge regression from the standardised features to the labels written as ±1 columns, solved
in closed form, and the class with the largest output wins. No learning rate, no steps, no seed: the same
features always give the same classifier, so the score measures only what pretraining put into the vectors.

Legend: N examples, F features, C classes.
"""

import numpy as np

RIDGE = 1.0  # the L2 penalty per example: keeps the solve well posed when features are nearly collinear


# The penalties `fit_chosen_ridge` tries. With about as many examples as features, a barely penalised
# least-squares fit interpolates its training set and scores worst on new examples (the "double descent"
# peak): on the ladder's 384 MiniLM features, 100 examples a class (300 in all) scored below 30 a class
# with RIDGE. Choosing the penalty on held-out folds of the training set removes the dip.
RIDGE_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)
FOLDS = 5


def fit_linear_classifier(features, labels, num_classes, ridge=RIDGE):
    """(weights (F + 1, C), feature mean, feature std) of a ridge classifier on (N, F) features and (N,)
    integer labels."""
    return _fit(features, labels, num_classes, [ridge])[0]


def _fit(features, labels, num_classes, ridges):
    """fit_linear_classifier's result for each penalty of `ridges`, sharing the one (F + 1, F + 1) product."""
    features = np.asarray(features, dtype=np.float64)
    mean, std = features.mean(axis=0), features.std(axis=0) + 1e-6
    x = np.hstack([(features - mean) / std, np.ones((len(features), 1))])  # (N, F + 1)
    targets = 2.0 * np.eye(num_classes)[labels] - 1.0  # (N, C): +1 for the example's class, -1 elsewhere
    gram, projected = x.T @ x, x.T @ targets  # (F + 1, F + 1), (F + 1, C)
    unpenalised = np.ones(x.shape[1])
    unpenalised[-1] = 0.0  # the bias is not penalised
    return [(np.linalg.solve(gram + ridge * np.diag(unpenalised), projected), mean, std) for ridge in ridges]


def fit_chosen_ridge(features, labels, num_classes, ridges=RIDGE_GRID, folds=FOLDS):
    """(fit_linear_classifier's result, the penalty): the penalty of `ridges` whose classifiers, each trained
    on all folds of the training set but one, classify the held-out folds best (on a tie the larger). The
    folds are fixed by the example's position (every FOLDS-th), so the same data always gives the same fit."""
    features, labels = np.asarray(features, dtype=np.float64), np.asarray(labels)
    fold = np.arange(len(features)) % folds
    correct = np.zeros(len(ridges))
    for k in range(folds):
        kept, held = fold != k, fold == k
        for index, fitted in enumerate(_fit(features[kept], labels[kept], num_classes, ridges)):
            correct[index] += np.sum(predict(fitted, features[held]) == labels[held])
    best = last_best(correct)
    return fit_linear_classifier(features, labels, num_classes, ridges[best]), ridges[best]


def fit_chosen_on_held_out(features, labels, held_features, held_labels, num_classes, ridges=RIDGE_GRID):
    """(fitted, the penalty, held-out accuracy as a share): the penalty of `ridges` whose classifier, trained
    on all of (features, labels), classifies a separate held-out set best (on a tie the larger). What an
    experiment with a validation split uses: the held-out set is its validation set, never its test set."""
    fits = _fit(features, labels, num_classes, ridges)
    accuracy = [float(np.mean(predict(fitted, held_features) == np.asarray(held_labels))) for fitted in fits]
    best = last_best(accuracy)
    return fits[best], ridges[best], accuracy[best]


def last_best(scores):
    """The index of the best of `scores`, the last one on a tie (the grids run from small to large penalty,
    and the larger penalty is the safer choice)."""
    return len(scores) - 1 - int(np.argmax(np.asarray(scores)[::-1]))


def predict(fitted, features):
    """(N,) predicted classes of (N, F) features with a `fit_linear_classifier` result."""
    weights, mean, std = fitted
    x = np.hstack([(np.asarray(features, dtype=np.float64) - mean) / std, np.ones((len(features), 1))])
    return np.argmax(x @ weights, axis=1)
