"""Checking a batch before it enters the model, so bad input fails with a message that says what to fix.

Every check here would otherwise surface as an IndexError deep inside an embedding lookup or a gather, or,
worse, as no error at all (a negative position silently wraps around to the end of the sequence).

Legend: B batch, S sequence length, P masked positions per sequence.
"""

import numpy as np

from minibert.errors import ShapeError


def check_batch(config, input_ids, token_type_ids=None, attention_mask=None):
    """Return (input_ids, token_type_ids, attention_mask) as int64 arrays of shape (B, S), defaults filled in:
    segment A (0) everywhere, and no padding. A single sequence (S,) becomes a batch of one."""
    input_ids = _int_array(input_ids, "input_ids")
    if input_ids.ndim == 1:
        input_ids = input_ids[None, :]
    if input_ids.ndim != 2 or input_ids.shape[1] == 0:
        raise ShapeError(f"input_ids must be (batch, seq_len) token ids, got shape {input_ids.shape}")
    batch, seq_len = input_ids.shape
    if seq_len > config.max_position_embeddings:
        raise ShapeError(f"sequence length {seq_len} exceeds max_position_embeddings="
                         f"{config.max_position_embeddings}: BERT's positions are learned, one vector each, "
                         "so it cannot read further. Truncate the input (e.g. max_seq_length=128) or use a "
                         "config with more positions")
    _check_range(input_ids, "input_ids", config.vocab_size, "vocab_size",
                 "is the tokenizer's vocabulary the model's? (config.vocab_size must be len(vocab))")
    if token_type_ids is None:
        token_type_ids = np.zeros_like(input_ids)
    else:
        token_type_ids = _same_shape(_int_array(token_type_ids, "token_type_ids"), input_ids,
                                     "token_type_ids")
    _check_range(token_type_ids, "token_type_ids", config.type_vocab_size, "type_vocab_size",
                 "segment ids are 0 for sentence A and 1 for sentence B")
    if attention_mask is None:
        attention_mask = np.ones_like(input_ids)
    else:
        attention_mask = _same_shape(np.asarray(attention_mask), input_ids, "attention_mask")
        # bool, int or float (HF users often pass 1.0/0.0) are all fine, as long as it is ones and zeros
        if attention_mask.dtype.kind not in "biuf" or not np.isin(attention_mask, (0, 1)).all():
            raise ShapeError("attention_mask must hold only 1 (a real token) and 0 (padding), got "
                             f"{np.unique(attention_mask)[:10].tolist()}")
    return input_ids, token_type_ids, attention_mask.astype(np.int64, copy=False)


def check_masked_positions(masked_positions, batch, seq_len):
    """Return masked_positions as int64 (B, P), every entry in 0..S-1."""
    positions = _int_array(masked_positions, "masked_positions")
    if positions.ndim == 1 and batch == 1:
        positions = positions[None, :]
    if positions.ndim != 2 or positions.shape[0] != batch:
        raise ShapeError(f"masked_positions must be (batch={batch}, P), got shape {positions.shape}")
    _check_range(positions, "masked_positions", seq_len, "the sequence length",
                 "positions index tokens 0..seq_len-1 (pad unused slots with 0 and give them weight 0)")
    return positions


def _int_array(values, name):
    try:
        array = np.asarray(values)
    except ValueError:  # NumPy refuses rows of different lengths
        raise ShapeError(f"{name} has rows of different lengths; pad the short rows to one length (padded "
                         "tokens get attention_mask 0, padded masked positions weight 0)") from None
    if array.size == 0 and array.dtype.kind == "f":  # np.asarray([]) is float64
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise ShapeError(f"{name} must be integers, got dtype {array.dtype}; convert with .astype(np.int64)")
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
        # casting would wrap the value around to a negative number, and the error would name that instead
        raise ShapeError(f"{name} holds {array.max()}, far beyond any vocabulary or position; check the ids")
    return array.astype(np.int64, copy=False)


def _same_shape(array, input_ids, name):
    if array.ndim == 1 and input_ids.shape[0] == 1:
        array = array[None, :]
    if array.shape != input_ids.shape:
        raise ShapeError(f"{name} has shape {array.shape} but input_ids has shape {input_ids.shape}; "
                         "they must match, one entry per token")
    return array


def _check_range(array, name, limit, limit_name, hint):
    bad = (array < 0) | (array >= limit)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ShapeError(f"{name}[{', '.join(map(str, where))}] = {array[where]} is outside 0..{limit - 1} "
                         f"({limit_name}={limit}); {hint}")
