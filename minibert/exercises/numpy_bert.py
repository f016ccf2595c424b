"""BERT's forward pass in plain NumPy, written apart from the model: the referee of the layer exercises.

Each function reads the weights by their checkpoint names from a `{name: array}` dict (`model.state_dict()`)
and computes in evaluation mode (no dropout). Nothing here calls minibert's layers, so an exercise body that
is wrong cannot make its own referee agree with it.

Legend: B batch, S sequence length, H hidden size, A heads, D head size, I intermediate size.
"""

import math

import numpy as np


def gelu(x):
    """The exact GELU, x·Φ(x), Φ through math.erf (BERT's "gelu")."""
    return x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def layer_norm(x, weights, prefix, eps):
    normalised = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    return normalised * weights[f"{prefix}.weight"] + weights[f"{prefix}.bias"]


def dense(x, weights, prefix):
    return x @ weights[f"{prefix}.weight"].T + weights[f"{prefix}.bias"]


def encoder_layer(x, attention_mask, weights, prefix, config):
    """One post-LN layer on x (B, S, H); attention_mask (B, S) 1 for real tokens. Loops over heads."""
    heads, size = config.num_attention_heads, config.hidden_size // config.num_attention_heads
    q, k, v = (dense(x, weights, f"{prefix}.attention.self.{name}") for name in ("query", "key", "value"))
    context = np.zeros_like(x)
    for head in range(heads):
        part = slice(head * size, (head + 1) * size)
        scores = q[..., part] @ k[..., part].transpose(0, 2, 1) / math.sqrt(size)  # (B, S, S)
        scores = np.where(attention_mask[:, None, :] == 1, scores, -np.inf)  # padding keys hidden
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        context[..., part] = probs / probs.sum(-1, keepdims=True) @ v[..., part]
    eps = config.layer_norm_eps
    x = layer_norm(x + dense(context, weights, f"{prefix}.attention.output.dense"), weights,
                   f"{prefix}.attention.output.LayerNorm", eps)
    widened = gelu(dense(x, weights, f"{prefix}.intermediate.dense"))  # (B, S, I)
    return layer_norm(x + dense(widened, weights, f"{prefix}.output.dense"), weights, f"{prefix}.output.LayerNorm",
                      eps)


def embeddings(input_ids, token_type_ids, weights, prefix, config):
    x = (weights[f"{prefix}.word_embeddings.weight"][input_ids]
         + weights[f"{prefix}.token_type_embeddings.weight"][token_type_ids]
         + weights[f"{prefix}.position_embeddings.weight"][:input_ids.shape[1]])
    return layer_norm(x, weights, f"{prefix}.LayerNorm", config.layer_norm_eps)


def bert(input_ids, token_type_ids, attention_mask, weights, config, prefix=""):
    """(sequence_output (B, S, H), pooled_output (B, H)) of a BertModel whose weights are under `prefix`."""
    x = embeddings(input_ids, token_type_ids, weights, f"{prefix}embeddings", config)
    for index in range(config.num_hidden_layers):
        x = encoder_layer(x, attention_mask, weights, f"{prefix}encoder.layer.{index}", config)
    return x, np.tanh(dense(x[:, 0], weights, f"{prefix}pooler.dense"))
