"""The pieces of a transformer encoder layer (Vaswani et al. 2017, §3), in the order data flows through them.

1. `MultiHeadSelfAttention` (§3.2): every token makes a query, a key and a value. Its output is the average
   of all values, weighted by how well its query matches each key: softmax(q·kᵀ / √D + mask) · v. With A
   heads, the hidden vector is split into A slices of size D = H / A, and each head attends on its own slice,
   so different heads can look for different things. No Python loop over heads or tokens: the heads become
   an axis, (B, S, H) -> (B, A, S, D). The tokens that ask (queries) and the tokens that answer (keys and
   values) are the same in self-attention; like Google's `attention_layer(from_tensor, to_tensor)`, the
   layer can also be given R tokens that ask, and then returns R outputs.
2. `FeedForward` (§3.3): FFN(x) = W₂·act(W₁·x + b₁) + b₂, applied to every token on its own. It widens each
   vector from H to the intermediate size I (4·H in BERT), applies the activation, and narrows it back. The
   widening half is here, under BERT's checkpoint name `intermediate.dense`. The activations BERT configs
   name (`hidden_act` in `config.json`):
   - "gelu": the exact GELU, x·Φ(x) with Φ the normal CDF via erf (Hendrycks & Gimpel 2016). The BERT paper,
     Google's first release and HuggingFace's "gelu" use it.
   - "gelu_new" (also "gelu_tanh", "gelu_pytorch_tanh"): the tanh approximation
     0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), which Google's modeling.py switched to later. The two differ
     by up to about 1e-3, enough to matter when loading weights trained with the other one.
   - "relu": max(x, 0), the original Transformer's choice.
3. `SublayerOutput`: how both sublayers end. BERT is "post-LN" (§5.4; Google modeling.py `transformer_model`):

       x = LayerNorm(x + Dropout(Dense(SubLayer(x))))

   Dense is attention's output projection W^O (H -> H, `attention.output.*` in checkpoints), or the
   feed-forward's narrowing W₂ (I -> H, `output.*`): BERT's checkpoints keep both there, and so do we.

Legend: B batch, S sequence length, H hidden size, A heads, D head size (H / A), I intermediate size,
R the tokens that ask (R = S in self-attention, where every token asks).
"""

# One batched matmul (B, A, S, D) @ (B, A, D, S) computes every head's scores together.
# Pre-LN transformers (GPT-2 onwards) normalise before the sublayer instead; BERT's weights assume post-LN.

import math

from minibert import functional as F
from minibert.errors import ConfigError
from minibert.nn.layers import Dropout, LayerNorm, Linear
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

    def forward(self, x, mask=None, asking=None):
        """x (B, S, H): the tokens that answer, each with a key and a value. asking (B, R, H): the tokens that
        ask, each with a query; by default x itself (self-attention, R = S). mask boolean, True where a query
        may see a key, broadcastable to (B, A, R, S): (B, 1, 1, S) for padding alone, (B, 1, R, S) with a
        causal mask (see `minibert/model/masks.py`).

        Returns (context (B, R, H), probabilities (B, A, R, S)).
        """
        asking = x if asking is None else asking  # Google's from_tensor; x is its to_tensor
        # BEGIN EXERCISE attention_forward: q/√D, k, v; masked softmax; dropout; @ v; join heads
        batch, num_asking, hidden = asking.shape
        # Scaling q by 1/√D is the same as scaling the scores, on a smaller array. Why scale: a dot product
        # of D random unit-variance terms has variance D; without it the softmax saturates (Vaswani §3.2.1).
        q = self.split_heads(self.query(asking) * (1.0 / math.sqrt(self.head_size)))  # (B, A, R, D)
        k = self.split_heads(self.key(x))  # (B, A, S, D)
        v = self.split_heads(self.value(x))  # (B, A, S, D)
        scores = q @ k.transpose(0, 1, 3, 2)  # (B, A, R, D) @ (B, A, D, S) -> (B, A, R, S)
        probs = F.softmax(scores, axis=-1, mask=mask)  # (B, A, R, S), rows sum to 1 over visible keys
        # Dropout on the attention weights, as in BERT (Google modeling.py `attention_layer`).
        context = self.dropout(probs) @ v  # (B, A, R, S) @ (B, A, S, D) -> (B, A, R, D)
        context = context.transpose(0, 2, 1, 3).reshape(batch, num_asking, hidden)  # heads side by side: (B, R, H)
        return context, probs
        # END EXERCISE

    def split_heads(self, x):
        """(B, S, H) -> (B, A, S, D): head a gets the slice [a·D, (a+1)·D) of every hidden vector."""
        # BEGIN EXERCISE split_heads: cut H into A slices of D, then move the head axis before the tokens
        batch, seq_len, _ = x.shape
        return x.reshape(batch, seq_len, self.num_heads, self.head_size).transpose(0, 2, 1, 3)  # (B, A, S, D)
        # END EXERCISE


# The GELU names and the form each means (F.gelu's `approximate`)
GELU_FORMS = {"gelu": "none", "gelu_new": "tanh", "gelu_tanh": "tanh", "gelu_pytorch_tanh": "tanh"}

ACTIVATIONS = {
    **{name: (lambda x, form=form: F.gelu(x, approximate=form)) for name, form in GELU_FORMS.items()},
    "relu": lambda x: x.relu(),
}


def activation(name):
    """The function of Tensors that `hidden_act = name` means."""
    if name not in ACTIVATIONS:
        raise ConfigError(f"hidden_act={name!r} is not supported; choose one of {', '.join(ACTIVATIONS)}")
    return ACTIVATIONS[name]


class FeedForward(Module):
    """act(x·W₁ᵀ + b₁): (B, S, H) -> (B, S, I). HF's `BertIntermediate`."""

    def __init__(self, hidden_size, intermediate_size, hidden_act, rng, std=0.02):
        super().__init__()
        self.dense = Linear(hidden_size, intermediate_size, rng, std)
        self.hidden_act = hidden_act
        self.act = activation(hidden_act)

    def forward(self, x):
        # BEGIN EXERCISE feed_forward: widen H to I with the dense layer, then the activation
        return self.act(self.dense(x))  # (B, S, H) -> (B, S, I)
        # END EXERCISE


class SublayerOutput(Module):
    """LayerNorm(residual + Dropout(Dense(h))). HF's `BertSelfOutput` and `BertOutput`."""

    def __init__(self, in_features, hidden_size, dropout_prob, layer_norm_eps, rng, std=0.02):
        super().__init__()
        self.dense = Linear(in_features, hidden_size, rng, std)
        self.LayerNorm = LayerNorm(hidden_size, layer_norm_eps)  # capitalised: HF's checkpoint name
        self.dropout = Dropout(dropout_prob, rng)

    def forward(self, h, residual):
        """h (B, S, in_features) from the sublayer, residual (B, S, H) its input -> (B, S, H)."""
        # BEGIN EXERCISE sublayer_output: project back to H, dropout, add the residual, and only then LayerNorm
        h = self.dense(h)  # (B, S, in_features) -> (B, S, H)
        return self.LayerNorm(residual + self.dropout(h))  # post-LN: the norm comes after the residual sum
        # END EXERCISE
