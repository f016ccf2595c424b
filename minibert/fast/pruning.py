"""The pruned last layer: in pretraining, the last encoder layer computes only the rows the heads read.

The MLM head reads the P masked positions and the NSP head reads [CLS]; no later layer reads any other
output of the last layer. So that layer needs queries only at those 1 + P rows, while every token still
serves as a key and a value: the same logits, loss and gradients for less work (about a quarter of a layer
less at P = 20 of S = 128; docs/performance.md). `prune_last_layer(model)` gives a `BertForPreTraining` this
forward; its sequence_output then holds the 1 + P rows it computed, [CLS] first, (B, 1 + P, H), and the last
layer's attention weights, when asked, are (B, A, 1 + P, S).

Legend: B batch, S sequence length, H hidden size, A heads, D head size, P masked positions, R = 1 + P rows.
"""

import math
import types

import numpy as np

from minibert import functional as F
from minibert.errors import ConfigError
from minibert.model import BertForPreTraining, build_attention_mask
from minibert.model.bert import gather_positions
from minibert.model.inputs import check_batch, check_masked_positions
from minibert.model.pretraining import PreTrainingOutput


def prune_last_layer(model):
    """Give `model` (a BertForPreTraining) the pruned forward below; returns the model."""
    if not isinstance(model, BertForPreTraining):
        raise ConfigError(f"the last layer can be pruned in a BertForPreTraining only (its heads read [CLS] and "
                          f"the masked positions), not in a {type(model).__name__}")
    model.forward = types.MethodType(pruned_forward, model)
    return model


def pruned_forward(model, input_ids, token_type_ids=None, attention_mask=None, masked_positions=None,
                   output_attentions=False, attention=None):
    """BertForPreTraining.forward, with the last layer on [CLS] and the masked positions only."""
    if masked_positions is None:  # the MLM head reads every position: nothing to prune
        return BertForPreTraining.forward(model, input_ids, token_type_ids, attention_mask, None,
                                          output_attentions, attention)
    input_ids, token_type_ids, attention_mask = check_batch(model.config, input_ids, token_type_ids,
                                                            attention_mask)
    masked_positions = check_masked_positions(masked_positions, *input_ids.shape)
    bert = model.bert
    mask = build_attention_mask(attention_mask, attention or bert.config.attention)
    x = bert.embeddings(input_ids, token_type_ids)  # (B, S, H)
    *first_layers, last = bert.encoder.layer
    attentions = [] if output_attentions else None
    for layer in first_layers:
        x, probs = layer(x, mask)  # (B, S, H)
        if output_attentions:
            attentions.append(probs.data)
    rows = np.concatenate([np.zeros_like(masked_positions[:, :1]), masked_positions], axis=1)  # (B, R)
    h, probs = last_layer_at(last, x, mask, rows)  # (B, R, H)
    if output_attentions:
        attentions.append(probs.data)
    pooled_output = bert.pooler(h)  # reads row 0, [CLS]
    mlm_logits = model.cls.predictions(h[:, 1:], bert.embeddings.word_embeddings.weight)  # (B, P, V)
    nsp_logits = model.cls.seq_relationship(pooled_output)  # (B, 2)
    return PreTrainingOutput(h, pooled_output, mlm_logits, nsp_logits, attentions)


def last_layer_at(layer, x, mask, rows):
    """An EncoderLayer's outputs at `rows` (B, R) only: x (B, S, H) -> ((B, R, H), probabilities (B, A, R, S))."""
    queries = gather_positions(x, rows)  # (B, R, H): only these tokens ask
    if mask is not None and mask.shape[2] > 1:  # a causal mask has a row per query: keep the askers' rows
        mask = np.take_along_axis(mask, rows[:, None, :, None], axis=2)  # (B, 1, S, S) -> (B, 1, R, S)
    context, probs = attend_from(layer.attention.self, queries, x, mask)  # (B, R, H)
    h = layer.attention.output(context, residual=queries)  # (B, R, H)
    return layer.output(layer.intermediate(h), residual=h), probs


def attend_from(attention, queries, x, mask):
    """MultiHeadSelfAttention's formula with the queries of `queries` (B, R, H) and the keys and values of
    x (B, S, H): softmax(q·kᵀ/√D + mask)·v -> (context (B, R, H), probabilities (B, A, R, S)). The plain
    ops: the fused one takes q, k and v from the same tokens."""
    batch, num_queries, hidden = queries.shape
    q = attention.split_heads(attention.query(queries) * (1.0 / math.sqrt(attention.head_size)))  # (B, A, R, D)
    k = attention.split_heads(attention.key(x))  # (B, A, S, D)
    v = attention.split_heads(attention.value(x))  # (B, A, S, D)
    probs = F.softmax(q @ k.transpose(0, 1, 3, 2), axis=-1, mask=mask)  # (B, A, R, S)
    context = attention.dropout(probs) @ v  # (B, A, R, D)
    return context.transpose(0, 2, 1, 3).reshape(batch, num_queries, hidden), probs
