"""Fine-tuning batches: encoded examples of different lengths, padded into arrays with Google's names.

    input_ids    (B, S) int64  [CLS] ... [SEP] ( ... [SEP]), then [PAD]
    input_mask   (B, S) int64  1 on real tokens, 0 on padding
    segment_ids  (B, S) int64  0 for the first segment, 1 for the second, 0 on padding

plus each task's targets (`label_ids`, `start_positions`, ...).
Legend: B batch, S the longest sequence of the batch.
"""

# A batch is padded to its own longest sequence, not to max_seq_length: short sentences then cost what
# they are, about 4x less for the synthetic sentiment set at max_seq_length=128.

import numpy as np

from minibert.autograd import no_grad


def pad(sequences, value=0):
    """Lists of ints of different lengths -> an int64 (B, S) array, right-padded with `value`."""
    array = np.full((len(sequences), max(len(sequence) for sequence in sequences)), value, dtype=np.int64)
    for row, sequence in enumerate(sequences):
        array[row, :len(sequence)] = sequence
    return array


def encoder_inputs(input_ids, segment_ids, pad_id):
    """{"input_ids", "input_mask", "segment_ids"}: the three arrays every head reads."""
    ids = pad(input_ids, pad_id)
    mask = pad([[1] * len(sequence) for sequence in input_ids], 0)
    return {"input_ids": ids, "input_mask": mask, "segment_ids": pad(segment_ids, 0)}


def batch_order(count, batch_size, rng=None):
    """Index arrays, one per batch: in order, or shuffled by `rng` (a new order each epoch)."""
    order = np.arange(count) if rng is None else rng.permutation(count)
    return [order[start:start + batch_size] for start in range(0, count, batch_size)]


def shortest_first(model, features, make_batch, length, batch_size=64, forward=None):
    """Run `model` on every feature, for evaluation; yield (indexes, outputs) per batch: which features the
    batch holds, and the model's outputs for them, row by row (or `forward`'s, a method of the model such as
    `head_inputs`).

    The features are taken shortest first (`length(feature)`), so that each batch pads to lengths close to
    its own: a dev set that mixes 5- and 100-token texts would otherwise pay for the long ones in every
    batch. The model runs in eval mode, without recording a graph, and is put back in training mode
    afterwards if it was in it.
    """
    order = np.argsort([length(feature) for feature in features], kind="stable")
    forward = forward or model
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            for start in range(0, len(order), batch_size):
                indexes = order[start:start + batch_size]
                batch = make_batch([features[i] for i in indexes])
                yield indexes, forward(batch["input_ids"], batch["segment_ids"], batch["input_mask"])
    finally:
        model.train(was_training)
