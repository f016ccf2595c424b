"""The attention mask: which keys each query may see. GPT and BERT differ by this one function.

The point of the article the course follows (docs/background.md): a causal model (GPT) lets token i see only tokens
0..i, so when it guesses the blank in "小明给小红 ___ 一本书" it cannot see 书; BERT lets every token see every token.
Both also hide padding: `attention_mask` is 1 for a real token and 0 for a [PAD], and no query ever attends to a [PAD]
key. `build_attention_mask` is the one place a mask is made; the model calls it once per forward pass, and every
layer reuses the result. `mask_matrix` returns the same mask as a 0/1 grid to print in lessons.

Legend: B batch, S sequence length.
"""

# `mask_matrix` (rows: queries, columns: keys):
#     causal, S = 4         bidirectional, S = 4, last token padding
#     1 0 0 0               1 1 1 0
#     1 1 0 0               1 1 1 0
#     1 1 1 0               1 1 1 0
#     1 1 1 1               1 1 1 0

import numpy as np

from minibert.config import ATTENTION_KINDS
from minibert.errors import ConfigError, ShapeError


def build_attention_mask(attention_mask, attention="bidirectional"):
    """Boolean mask, True where query i may attend to key j, shaped to broadcast over (B, A, S, S) scores.

    attention_mask (B, S): 1 for real tokens, 0 for padding.
    Returns (B, 1, 1, S) for "bidirectional" (only padded keys are hidden: the same for every query), or
    (B, 1, S, S) for "causal" (also every key to the right of the query).
    """
    if attention not in ATTENTION_KINDS:
        raise ConfigError(f"attention={attention!r}: choose 'bidirectional' (BERT) or 'causal' (GPT)")
    attention_mask = np.asarray(attention_mask)
    if attention_mask.ndim != 2:
        raise ShapeError(f"attention_mask must be (batch, seq_len), got shape {attention_mask.shape}")
    # BEGIN EXERCISE attention_mask: keys (B, 1, 1, S) from attention_mask; causal also ANDs a lower triangle
    real_keys = attention_mask.astype(bool)[:, None, None, :]  # (B, 1, 1, S)
    if attention == "bidirectional":
        return real_keys
    seq_len = attention_mask.shape[1]
    sees_left = np.tri(seq_len, dtype=bool)  # (S, S): row i is True at columns 0..i
    return real_keys & sees_left  # (B, 1, S, S)
    # END EXERCISE


def mask_matrix(seq_len, attention="bidirectional", attention_mask=None):
    """The mask as 0/1 integers: (S, S) without `attention_mask`, (B, S, S) with one.

    Row i, column j is 1 when token i may attend to token j: the grids the course's article draws.
    """
    batch_mask = np.ones((1, seq_len), dtype=np.int64) if attention_mask is None else attention_mask
    batch_mask = np.asarray(batch_mask)
    if batch_mask.ndim == 1:
        batch_mask = batch_mask[None, :]
    if batch_mask.shape[-1] != seq_len:
        raise ShapeError(f"attention_mask has {batch_mask.shape[-1]} positions but seq_len={seq_len}")
    mask = build_attention_mask(batch_mask, attention)  # (B, 1, 1 or S, S)
    grid = np.broadcast_to(mask[:, 0], (mask.shape[0], seq_len, seq_len)).astype(np.int64)  # (B, S, S)
    return grid[0] if attention_mask is None or np.ndim(attention_mask) == 1 else grid
