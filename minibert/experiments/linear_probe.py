"""The feature-based approach: a frozen encoder's vectors, and a linear classifier trained on them alone.

The paper (§5.3, Table 7) also uses BERT without fine-tuning: the encoder's activations are fixed features
for a task model trained on top, as ELMo's are. Here the task model is the simplest one, a multinomial
logistic regression (one linear layer and a softmax) fitted by full-batch gradient descent on standardised
features. Nothing in the encoder changes, so the score measures what pretraining put into the vectors.

Legend: N examples, F features, C classes.
"""

import numpy as np


def fit_softmax_regression(features, labels, num_classes, steps=300, learning_rate=0.5, l2=1e-4):
    """Weights (F + 1, C) of a softmax regression on (N, F) features and (N,) integer labels, with the
    features' mean and standard deviation, fitted deterministically; returns (weights, mean, std)."""
    mean, std = features.mean(axis=0), features.std(axis=0) + 1e-6
    x = np.hstack([(features - mean) / std, np.ones((len(features), 1))]).astype(np.float64)  # (N, F + 1)
    targets = np.eye(num_classes)[labels]  # (N, C)
    weights = np.zeros((x.shape[1], num_classes))
    for _ in range(steps):
        logits = x @ weights  # (N, C)
        logits -= logits.max(axis=1, keepdims=True)
        probabilities = np.exp(logits)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        # gradient of the mean cross-entropy, plus the L2 penalty on the weights (not the bias row)
        gradient = x.T @ (probabilities - targets) / len(x)  # (F + 1, C)
        gradient[:-1] += l2 * weights[:-1]
        weights -= learning_rate * gradient
    return weights, mean, std


def predict(fitted, features):
    """(N,) predicted classes of (N, F) features with a `fit_softmax_regression` result."""
    weights, mean, std = fitted
    x = np.hstack([(features - mean) / std, np.ones((len(features), 1))])
    return np.argmax(x @ weights, axis=1)
