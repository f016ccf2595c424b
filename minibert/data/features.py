"""Instances as fixed-size arrays with Google's feature names: the batch format every loop feeds the model.

    input_ids             (B, S) int32    token ids, [MASK]ed where the model must predict; [PAD] = 0 after
    input_mask            (B, S) int32    1 on real tokens, 0 on padding (attention ignores padding)
    segment_ids           (B, S) int32    0 for [CLS] A [SEP], 1 for B [SEP], 0 on padding
    masked_lm_positions   (B, P) int32    positions the model predicts, increasing, 0 after the real ones
    masked_lm_ids         (B, P) int32    the original ids there (the labels), 0 after the real ones
    masked_lm_weights     (B, P) float32  1.0 on real predictions, 0.0 on padding (the MLM loss's weights)
    next_sentence_labels  (B,)   int32    0 IsNext, 1 NotNext (SOP: 0 in order, 1 swapped; "none": 0)
"""

# Google's `write_instance_to_example_files` pads each instance to `max_seq_length` and its predictions to
# `max_predictions_per_seq`, and names the fields as in the docstring's table. The MLM loss is
# sum(w * nll) / (sum(w) + 1e-5), with w the `masked_lm_weights`.
#
# S is max_seq_length, P max_predictions_per_seq. Masking happens in two places with one routine: when the
# shards are written (static masking) or each time a batch is served (dynamic masking), so the unmasked rows
# carry `word_starts` (B, S) bool until then.

import numpy as np

from minibert.data.masking import create_masked_lm_predictions

UNMASKED_FIELDS = ("input_ids", "input_mask", "segment_ids", "word_starts", "next_sentence_labels")
MASKED_LM_FIELDS = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")
BATCH_FIELDS = ("input_ids", "input_mask", "segment_ids", *MASKED_LM_FIELDS, "next_sentence_labels")


def field_specs(max_seq_length, max_predictions_per_seq):
    """{name: (dtype, shape of one row)} for every field an unmasked row or a batch can hold."""
    sequence, predictions = (max_seq_length,), (max_predictions_per_seq,)
    return {
        "input_ids": (np.int32, sequence),
        "input_mask": (np.int32, sequence),
        "segment_ids": (np.int32, sequence),
        "word_starts": (np.bool_, sequence),
        "masked_lm_positions": (np.int32, predictions),
        "masked_lm_ids": (np.int32, predictions),
        "masked_lm_weights": (np.float32, predictions),
        "next_sentence_labels": (np.int32, ()),
    }


def instance_rows(instances, max_seq_length, pad_id):
    """A list of `Instance`s -> unmasked rows {UNMASKED_FIELDS: (N, S) or (N,) arrays}, padded."""
    specs = field_specs(max_seq_length, 1)
    rows = {name: np.zeros((len(instances), *specs[name][1]), specs[name][0]) for name in UNMASKED_FIELDS}
    rows["input_ids"][:] = pad_id
    for n, instance in enumerate(instances):
        length = len(instance.input_ids)
        rows["input_ids"][n, :length] = instance.input_ids
        rows["input_mask"][n, :length] = 1
        rows["segment_ids"][n, :length] = instance.segment_ids
        rows["word_starts"][n, :length] = instance.word_starts
        rows["next_sentence_labels"][n] = instance.next_sentence_label
    return rows


def mask_rows(rows, rng, special_tokens, config):
    """Unmasked rows -> a batch in Google's format: each row masked by the masking routine, padded to P.

    Every row gets a fresh mask from `rng`; `word_starts` is used up here and does not appear in the result.
    """
    count = len(rows["input_ids"])
    specs = field_specs(rows["input_ids"].shape[1], config.max_predictions_per_seq)
    batch = {name: np.zeros((count, *specs[name][1]), specs[name][0]) for name in MASKED_LM_FIELDS}
    batch["input_ids"] = rows["input_ids"].copy()
    for name in ("input_mask", "segment_ids", "next_sentence_labels"):
        batch[name] = rows[name]
    lengths = rows["input_mask"].sum(axis=1)  # (B,)
    for n in range(count):
        length = lengths[n]
        masked = create_masked_lm_predictions(rows["input_ids"][n, :length], rows["word_starts"][n, :length],
                                              rng, special_tokens, config)
        predicted = len(masked.positions)
        batch["input_ids"][n, :length] = masked.input_ids
        batch["masked_lm_positions"][n, :predicted] = masked.positions
        batch["masked_lm_ids"][n, :predicted] = masked.labels
        batch["masked_lm_weights"][n, :predicted] = 1.0
    return {name: batch[name] for name in BATCH_FIELDS}
