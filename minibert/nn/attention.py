"""Multi-head self-attention (Vaswani et al. 2017, §3.2), all heads at once.

Every token makes a query, a key and a value. Its output is the average of all values, weighted by how well
its query matches each key: softmax(q·kᵀ / √D + mask) · v. With A heads, the hidden vector is split into A
slices of size D = H / A, and each head attends on its own slice, so different heads can look for different
things. No Python loop over heads or tokens: the heads become an axis, (B, S, H) -> (B, A, S, D).

Legend: B batch, S sequence length, H hidden size, A heads, D head size (H / A).
"""

# One batched matmul (B, A, S, D) @ (B, A, D, S) computes every head's scores together.
# The output projection (Vaswani's W^O) is not here: BERT's checkpoints keep it in the sublayer that follows,
# `attention.output.dense` (see `sublayer.py`; Google modeling.py does the same in `transformer_model`).

import math

from minibert import functional as F
from minibert.autograd import Tensor, concat
from minibert.nn.fusion import fused_ops
from minibert.nn.layers import Dropout, Linear
from minibert.nn.module import Module


class MultiHeadSelfAttention(Module):
    """softmax(q·kᵀ/√D + mask)·v for A heads, on x (B, S, H). HF's names: query, key, value."""

    def __init__(self, hidden_size, num_heads, dropout_prob, rng, std=0.02):
        super().__init__()
        self.num_heads = num_heads
        self.head_size = hidden_size // num_heads
        self.query = Linear(hidden_size, hidden_size, rng, std)
        self.key = Linear(hidden_size, hidden_size, rng, std)
        self.value = Linear(hidden_size, hidden_size, rng, std)
        self.dropout = Dropout(dropout_prob, rng)

    def forward(self, x, mask=None, queries=None):
        """x (B, S, H); mask boolean, True where a query may see a key, broadcastable to (B, A, R, S):
        (B, 1, 1, S) for padding alone, (B, 1, S, S) with a causal mask (see `minibert/model/masks.py`).
        queries (B, R, H): the vectors of the R tokens whose outputs are wanted (default: x, every token),
        each attending over all S tokens of x; how the last layer skips the rows no head reads (bert.py).

        Returns (context (B, R, H), probabilities (B, A, R, S)); R = S without `queries`.
        """
        queries = x if queries is None else queries
        # The plain ops (the default; nn/fusion.py), and for queries other than x, which the fused op does not
        # take: only the pruned last layer asks that, on a few rows.
        if not fused_ops() or queries is not x:
            # BEGIN EXERCISE attention_forward: q/√D from queries, k, v from x; masked softmax; dropout; @ v; join heads
            batch, num_queries, hidden = queries.shape
            # Scaling q by 1/√D is the same as scaling the scores, on a smaller array. Why scale: a dot product
            # of D random unit-variance terms has variance D; without it the softmax saturates (Vaswani §3.2.1).
            q = self.split_heads(self.query(queries) * (1.0 / math.sqrt(self.head_size)))  # (B, A, R, D)
            k = self.split_heads(self.key(x))  # (B, A, S, D)
            v = self.split_heads(self.value(x))  # (B, A, S, D)
            scores = q @ k.transpose(0, 1, 3, 2)  # (B, A, R, D) @ (B, A, D, S) -> (B, A, R, S)
            probs = F.softmax(scores, axis=-1, mask=mask)  # (B, A, R, S), rows sum to 1 over visible keys
            # Dropout on the attention weights, as in BERT (Google modeling.py `attention_layer`).
            context = self.dropout(probs) @ v  # (B, A, R, S) @ (B, A, S, D) -> (B, A, R, D)
            context = context.transpose(0, 2, 1, 3).reshape(batch, num_queries, hidden)  # heads side by side again
            return context, probs
            # END EXERCISE
        return self.fused_forward(x, mask)  # the same, as two fused ops

    def fused_forward(self, x, mask=None):
        """What `forward` computes, as one Linear for q, k and v together (their weights stacked, (3H, H): one
        larger product instead of three, and one gradient for x instead of three to add up), then
        F.self_attention on the (B, S, 3H) result. The probabilities come back without a gradient."""
        weight = concat([self.query.weight, self.key.weight, self.value.weight])  # (3H, H)
        bias = concat([self.query.bias, self.key.bias, self.value.bias])  # (3H,)
        qkv = F.linear(x, weight, bias)  # (B, S, 3H)
        context, probs = F.self_attention(qkv, self.num_heads, mask, self.dropout.p, self.training, self.dropout.rng)
        return context, Tensor(probs)

    def split_heads(self, x):
        """(B, S, H) -> (B, A, S, D): head a gets the slice [a·D, (a+1)·D) of every hidden vector."""
        batch, seq_len, _ = x.shape
        return x.reshape(batch, seq_len, self.num_heads, self.head_size).transpose(0, 2, 1, 3)
