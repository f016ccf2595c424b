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


def fit_linear_classifier(features, labels, num_classes, ridge=RIDGE):
    """(weights (F + 1, C), feature mean, feature std) of a ridge classifier on (N, F) features and (N,)
    integer labels."""
    features = np.asarray(features, dtype=np.float64)
    mean, std = features.mean(axis=0), features.std(axis=0) + 1e-6
    x = np.hstack([(features - mean) / std, np.ones((len(features), 1))])  # (N, F + 1)
    targets = 2.0 * np.eye(num_classes)[labels] - 1.0  # (N, C): +1 for the example's class, -1 elsewhere
    penalty = ridge * np.eye(x.shape[1])
    penalty[-1, -1] = 0.0  # the bias is not penalised
    weights = np.linalg.solve(x.T @ x + penalty, x.T @ targets)  # (F + 1, C)
    return weights, mean, std


def predict(fitted, features):
    """(N,) predicted classes of (N, F) features with a `fit_linear_classifier` result."""
    weights, mean, std = fitted
    x = np.hstack([(np.asarray(features, dtype=np.float64) - mean) / std, np.ones((len(features), 1))])
    return np.argmax(x @ weights, axis=1)
