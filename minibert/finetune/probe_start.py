"""Linear probing, then fine-tuning (LP-FT, Kumar et al. 2022, "Fine-Tuning can Distort Pretrained Features
and Underperform Out-of-Distribution"): the new head starts as the best linear classifier of the frozen
encoder's features, not as random numbers.

A head drawn from N(0, 0.02) sends random gradients into the encoder for the first steps; with a few hundred
examples, an encoder whose features were already good is pushed off them before the head has learned to
read them, and the best epoch can end far below what a probe of the frozen encoder reads
(docs/finetuning_recipe.md measures it on all-MiniLM-L6-v2). Starting from the probe, fine-tuning begins
where the frozen features already are and only moves from there.

The probe is linear_probe.py's ridge classifier on the head's own inputs (the pooled [CLS], the mean of the
tokens, or a bi-encoder's [u, v, |u - v|, u * v]) of the training examples, its penalty chosen on folds of
the training set: no dev example is read. Its standardisation is folded into the weights:

    scores = ((x - mean) / std) · W + b  =  x · (W / std) + (b - (mean / std) · W)
"""

import numpy as np

from minibert.finetune.batching import shortest_first
from minibert.finetune.linear_probe import fit_chosen_ridge


def start_head_from_probe(task, model, features, batch_size=64):
    """Set `model.classifier` to the ridge probe of its frozen inputs on the labelled `features`; returns the
    chosen penalty."""
    head = model.classifier
    inputs = np.zeros((len(features), head.weight.shape[1]))
    for indexes, outputs in shortest_first(model, features, task.batch, task.length, batch_size,
                                           forward=model.head_inputs):
        inputs[indexes] = outputs.data
    labels = np.array([feature["label"] for feature in features])
    (weights, mean, std), ridge = fit_chosen_ridge(inputs, labels, head.weight.shape[0])
    scaled = weights[:-1] / std[:, None]  # (F, C): the standardisation folded into the weights
    head.weight.data[...] = scaled.T
    head.bias.data[...] = weights[-1] - mean @ scaled
    return ridge
