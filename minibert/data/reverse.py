"""Right to left: every sequence of a batch read backwards, so a causal model on it reads right to left.

ELMo (Peters et al. 2018) trains a left-to-right and a right-to-left language model and concatenates their
features; BERT's paper (§5.1) compares against such a pair. A right-to-left model is a left-to-right
(causal) one that reads each sequence reversed: `[CLS] a b c [SEP]` becomes `[SEP] c b a [CLS]`, and at
each position it sees only the tokens that stood to the right of it.

Only the real tokens of a row turn around; padding stays at the end. Masked positions are moved with their
tokens, so a pretraining batch stays consistent (its labels do not change). Legend: B batch, S sequence
length, P masked positions.
"""

import numpy as np

TOKEN_FIELDS = ("input_ids", "segment_ids", "input_mask")


def reversed_positions(input_mask):
    """(B, S) index array: row b's real tokens in reverse order, then its padding where it was."""
    input_mask = np.asarray(input_mask)
    lengths = input_mask.sum(axis=1, keepdims=True)  # (B, 1)
    positions = np.arange(input_mask.shape[1])[None, :]  # (1, S)
    return np.where(positions < lengths, lengths - 1 - positions, positions)  # (B, S)


def reverse_batch(batch):
    """A copy of `batch` (Google's feature names) with every row's real tokens reversed; masked_lm_positions
    (if present) point at the same tokens in their new places."""
    order = reversed_positions(batch["input_mask"])  # (B, S)
    reversed_batch = dict(batch)
    for name in TOKEN_FIELDS:
        if name in batch:
            reversed_batch[name] = np.take_along_axis(np.asarray(batch[name]), order, axis=1)
    if "masked_lm_positions" in batch:
        lengths = np.asarray(batch["input_mask"]).sum(axis=1, keepdims=True)  # (B, 1)
        positions = np.asarray(batch["masked_lm_positions"])  # (B, P)
        weights = np.asarray(batch["masked_lm_weights"])
        # a padded slot (weight 0) keeps position 0, which every row has
        reversed_batch["masked_lm_positions"] = np.where(weights > 0, lengths - 1 - positions, 0).astype(
            positions.dtype)
    return reversed_batch
