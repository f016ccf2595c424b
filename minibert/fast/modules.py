"""The layers the speed layer swaps in: each the core layer it replaces, with the same submodules and
parameters (so the same names, `state_dict` and checkpoints), whose `forward` does the same work faster:
fused ops, fewer rows, or products shared among the process plan's threads.

Each is a subclass of the core layer, built from it by `twin_of(layer)`, and computes what the core's
`forward` computes (tests/test_fast.py checks outputs and every gradient):
- `FusedSelfAttention`: q, k and v from one Linear (their weights stacked), then `self_attention`;
- `FusedFeedForward` and `FusedPredictionTransform`: the bias of the Linear before GELU added in GELU's pass;
- `FusedSublayerOutput`: Dropout, add and LayerNorm in one op;
- `SeededDropout`: the other dropouts (the embeddings'), their draws made in the kernel;
- `PrunedEncoder` (only with `accelerate(model, prune_last_layer=True)`): asked for the outputs at some
  positions (a BertForPreTraining's heads read [CLS] and the masked positions), the last layer computes
  only those. No later layer reads its other outputs, so every token there still answers (its key and
  value) but only those ask: the same numbers for less work (about a quarter of a layer at P = 20 of
  S = 128; docs/performance.md).
- `SharedLinear` and `SharedMaskedLMHead`: the other products (every other Linear, and the MLM decoder), on
  the products the process plan shares among its threads. With them no product of an accelerated model runs
  whole on BLAS's one thread inside the plan, but the pruned last layer's attention products (the core's
  formula, on the few rows that ask).

Legend: B batch, S sequence length, H hidden size, A heads, I intermediate size, R the positions asked for.
"""

from types import SimpleNamespace

import numpy as np

from minibert.autograd import Tensor, concat
from minibert.fast.ops import bias_gelu, dropout_add_layer_norm, seeded_dropout, self_attention, shared_linear
from minibert.model.bert import Encoder, gather_positions
from minibert.model.pretraining import MaskedLMHead, PredictionTransform
from minibert.nn.layers import Dropout, Linear
from minibert.nn.module import Module
from minibert.nn.transformer import GELU_FORMS, FeedForward, MultiHeadSelfAttention, SublayerOutput


def _adopt(fast_layer, core_layer):
    """Give `fast_layer` (a Module not yet set up) everything `core_layer` holds: its submodules and
    parameters (registered under the same names) and its other attributes."""
    Module.__init__(fast_layer)
    for name, value in vars(core_layer).items():
        if name not in ("_parameters", "_modules"):
            setattr(fast_layer, name, value)


class FusedSelfAttention(MultiHeadSelfAttention):
    def __init__(self, attention):
        _adopt(self, attention)

    def forward(self, x, mask=None, asking=None):
        """As MultiHeadSelfAttention.forward, x (B, S, H) -> (context (B, S, H), probabilities (B, A, S, S));
        the probabilities come back without a gradient. The fused op takes q, k and v from the same tokens:
        with other tokens `asking`, the core's formula runs."""
        if asking is not None:
            return super().forward(x, mask, asking)
        weight = concat([self.query.weight, self.key.weight, self.value.weight])  # (3H, H)
        bias = concat([self.query.bias, self.key.bias, self.value.bias])  # (3H,)
        qkv = shared_linear(x, weight, bias)  # (B, S, 3H): one larger product instead of three
        context, probs = self_attention(qkv, self.num_heads, mask, self.dropout.p, self.training, self.dropout.rng)
        return context, Tensor(probs)


class FusedFeedForward(FeedForward):
    def __init__(self, feed_forward):
        _adopt(self, feed_forward)

    def forward(self, x):
        if self.hidden_act not in GELU_FORMS:
            return super().forward(x)
        # act(x W₁ᵀ + b₁): (B, S, H) -> (B, S, I), the bias added inside GELU's pass
        return bias_gelu(shared_linear(x, self.dense.weight), self.dense.bias, GELU_FORMS[self.hidden_act])


class FusedPredictionTransform(PredictionTransform):
    def __init__(self, transform):
        _adopt(self, transform)

    def forward(self, h):
        if self.hidden_act not in GELU_FORMS:
            return super().forward(h)
        h = bias_gelu(shared_linear(h, self.dense.weight), self.dense.bias, GELU_FORMS[self.hidden_act])  # (B, P, H)
        return self.LayerNorm(h)


class FusedSublayerOutput(SublayerOutput):
    def __init__(self, sublayer_output):
        _adopt(self, sublayer_output)

    def forward(self, h, residual):
        norm, dropout = self.LayerNorm, self.dropout
        return dropout_add_layer_norm(self.dense(h), residual, norm.weight, norm.bias, norm.eps, dropout.p,
                                      self.training, dropout.rng)  # (B, S, H)


class SeededDropout(Dropout):
    def __init__(self, dropout):
        _adopt(self, dropout)

    def forward(self, x):
        return seeded_dropout(x, self.p, self.training, self.rng)


class PrunedEncoder(Encoder):
    def __init__(self, encoder):
        _adopt(self, encoder)

    def forward(self, x, mask, output_attentions=False, output_positions=None):
        """As Encoder.forward; with `output_positions` (B, R), the last layer computes only those rows."""
        if output_positions is None:
            return super().forward(x, mask, output_attentions)
        *first_layers, last = self.layer
        # the core's own loop over every layer but the last (Encoder.forward reads nothing of self but `layer`)
        x, attentions = Encoder.forward(SimpleNamespace(layer=first_layers), x, mask, output_attentions)  # (B, S, H)
        if mask is not None and mask.shape[2] > 1:  # a causal mask has a row per token: keep the askers' rows
            mask = np.take_along_axis(mask, output_positions[:, None, :, None], axis=2)  # (B, 1, R, S)
        x, probs = last(x, mask, asking=gather_positions(x, output_positions))  # (B, R, H), (B, A, R, S)
        if output_attentions:
            attentions.append(probs.data)
        return x, attentions


class SharedLinear(Linear):
    def __init__(self, linear):
        _adopt(self, linear)

    def forward(self, x):
        return shared_linear(x, self.weight, self.bias)  # x @ weight.T + bias: (..., in) -> (..., out)


class SharedMaskedLMHead(MaskedLMHead):
    def __init__(self, head):
        _adopt(self, head)

    def forward(self, h, word_embeddings):
        return shared_linear(self.transform(h), word_embeddings, self.bias)  # transform(h) @ Eᵀ + b: (B, P, V)


# The core layer -> its fast twin. Looked up by exact type: a fast layer is also an instance of its core class.
FAST_TWINS = {MultiHeadSelfAttention: FusedSelfAttention, FeedForward: FusedFeedForward,
              PredictionTransform: FusedPredictionTransform, SublayerOutput: FusedSublayerOutput,
              Dropout: SeededDropout, Linear: SharedLinear, MaskedLMHead: SharedMaskedLMHead}
PRUNED_TWINS = {**FAST_TWINS, Encoder: PrunedEncoder}  # with the last layer pruned


def twin_of(layer, twins=FAST_TWINS):
    """The fast twin of a core layer, sharing its parameters; the layer itself when it has none or is one."""
    twin = twins.get(type(layer))
    return layer if twin is None else twin(layer)
