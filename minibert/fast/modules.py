"""The layers the speed layer swaps in: each the core layer it replaces, with the same submodules and
parameters (so the same names, `state_dict` and checkpoints), whose `forward` calls the fused ops.

Each is a subclass of the core layer, built from it by `fused(layer)`, and computes what the core's
`forward` computes (tests/test_fast.py checks outputs and every gradient):
- `FusedSelfAttention`: q, k and v from one Linear (their weights stacked), then `self_attention`;
- `FusedFeedForward` and `FusedPredictionTransform`: the bias of the Linear before GELU added in GELU's pass;
- `FusedSublayerOutput`: Dropout, add and LayerNorm in one op;
- `SeededDropout`: the other dropouts (the embeddings'), their draws made in the kernel.

Legend: B batch, S sequence length, H hidden size, A heads, I intermediate size.
"""

from minibert import functional as F
from minibert.autograd import Tensor, concat
from minibert.fast.ops import bias_gelu, dropout_add_layer_norm, seeded_dropout, self_attention
from minibert.model.pretraining import PredictionTransform
from minibert.nn import Dropout, FeedForward, Module, MultiHeadSelfAttention, SublayerOutput
from minibert.nn.activations import GELU_FORMS


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

    def forward(self, x, mask=None):
        """As MultiHeadSelfAttention.forward, x (B, S, H) -> (context (B, S, H), probabilities (B, A, S, S));
        the probabilities come back without a gradient."""
        weight = concat([self.query.weight, self.key.weight, self.value.weight])  # (3H, H)
        bias = concat([self.query.bias, self.key.bias, self.value.bias])  # (3H,)
        qkv = F.linear(x, weight, bias)  # (B, S, 3H): one larger product instead of three
        context, probs = self_attention(qkv, self.num_heads, mask, self.dropout.p, self.training, self.dropout.rng)
        return context, Tensor(probs)


class FusedFeedForward(FeedForward):
    def __init__(self, feed_forward):
        _adopt(self, feed_forward)

    def forward(self, x):
        if self.hidden_act not in GELU_FORMS:
            return super().forward(x)
        # act(x W₁ᵀ + b₁): (B, S, H) -> (B, S, I), the bias added inside GELU's pass
        return bias_gelu(F.linear(x, self.dense.weight), self.dense.bias, GELU_FORMS[self.hidden_act])


class FusedPredictionTransform(PredictionTransform):
    def __init__(self, transform):
        _adopt(self, transform)

    def forward(self, h):
        if self.hidden_act not in GELU_FORMS:
            return super().forward(h)
        h = bias_gelu(F.linear(h, self.dense.weight), self.dense.bias, GELU_FORMS[self.hidden_act])  # (B, P, H)
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


# The core layer -> its fast twin. Subclasses come first: a fast layer is also an instance of its core class.
FAST_TWINS = {MultiHeadSelfAttention: FusedSelfAttention, FeedForward: FusedFeedForward,
              PredictionTransform: FusedPredictionTransform, SublayerOutput: FusedSublayerOutput,
              Dropout: SeededDropout}


def fused(layer):
    """The fast twin of a core layer, sharing its parameters; the layer itself when it has none or is one."""
    twin = FAST_TWINS.get(type(layer))
    return layer if twin is None else twin(layer)
