"""The basic layers: Linear, LayerNorm, Dropout (the embedding table is nn/embedding.py's).

Each holds its parameters and calls one op of `minibert.functional` (or `@`), whose backward gives the
parameters' gradients; so a layer has no backward of its own to get wrong.
Initialisation follows BERT (Google modeling.py `create_initializer`, HF `_init_weights`): weights drawn
from a normal distribution with std `initializer_range` = 0.02, biases 0, LayerNorm weight 1 and bias 0.

Shapes: `...` is any leading shape, e.g. (B, S) for a batch of sequences.
"""

# Google truncates the normal at 2 std; HuggingFace does not, and neither do we: the difference is 5% of
# the draws and does not matter for training.

import numpy as np

from minibert import functional as F
from minibert.nn.module import Module, Parameter


def normal_init(rng, shape, std):
    """Float32 draws from N(0, std²): BERT's initialiser for every weight matrix and embedding table.

    NumPy draws in float64; scaling in place keeps one float64 array alive, not two (the same numbers as
    `draws * std`), and `model/memory.py` counts it."""
    draws = rng.standard_normal(shape)
    draws *= std
    return draws.astype(np.float32)


class Linear(Module):
    """y = x·Wᵀ + b. W is stored [out_features, in_features], as in PyTorch and HF checkpoints."""

    def __init__(self, in_features, out_features, rng, std=0.02, bias=True):
        super().__init__()
        self.weight = Parameter(normal_init(rng, (out_features, in_features), std))  # (out, in)
        self.bias = Parameter(np.zeros(out_features, dtype=np.float32)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)  # x @ weight.T + bias: (..., in) -> (..., out)


class LayerNorm(Module):
    """Normalise each vector to mean 0 and variance 1, then scale and shift (Ba et al. 2016).

    eps = 1e-12 in BERT: it only keeps a constant vector from dividing by zero.
    """

    def __init__(self, hidden_size, eps=1e-12):
        super().__init__()
        self.weight = Parameter(np.ones(hidden_size, dtype=np.float32))  # (H,), Google's "gamma"
        self.bias = Parameter(np.zeros(hidden_size, dtype=np.float32))  # (H,), "beta"
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, self.weight, self.bias, self.eps)


class Dropout(Module):
    """Zero each value with probability p while training; the identity in eval mode.

    `rng` is a `numpy.random.Generator` shared with the rest of the model, so one seed makes a whole
    training run reproducible.
    """

    def __init__(self, p, rng):
        super().__init__()
        self.p = p
        self.rng = rng

    def forward(self, x):
        return F.dropout(x, self.p, self.training, self.rng)
