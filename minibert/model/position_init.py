"""A start for BERT's learned position embeddings: the sinusoids of the original Transformer.

BERT learns one vector per position from a random start (std 0.02), so at first positions i and i + 1 look
unrelated. Vaswani et al. (2017, §3.5) chose sinusoids because PE(p + k) is a fixed linear map of PE(p): one
query/key projection then finds "k to the left" at every position at once. Starting the learned table there
keeps BERT's model while giving the relative-position structure from the first step. The sinusoids are
scaled to the per-element spread of the normal initialiser (std), so that at step 0 the position vector
weighs as much as the token vector in their sum.
"""

# With a random start, a head that should read "the token before me" has to discover every pair of
# neighbours separately. The sinusoidal start keeps BERT's model: the vectors are still trained freely, and a
# checkpoint is the same kind of table. It also reaches past the sequence lengths a run trains on first:
# positions 32-127 are not random when the long sequences begin.

import numpy as np


def sinusoidal_positions(num_positions, hidden_size, std):
    """(num_positions, H) float32: PE[p, 2i] = sin(p / 10000^(2i/H)), PE[p, 2i+1] = cos(same), scaled to std."""
    positions = np.arange(num_positions)[:, None]  # (N, 1)
    rates = 10000.0 ** (-np.arange(0, hidden_size, 2) / hidden_size)  # (H/2,)
    table = np.zeros((num_positions, hidden_size))
    table[:, 0::2] = np.sin(positions * rates)
    table[:, 1::2] = np.cos(positions * rates[: hidden_size // 2])
    return (table * (std / table.std())).astype(np.float32)
