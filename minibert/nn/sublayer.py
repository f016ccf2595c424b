"""The end of each encoder sublayer: project back to H, dropout, add the residual, LayerNorm.

BERT is "post-LN" (Vaswani et al. 2017, §5.4; Google modeling.py `transformer_model`):

    x = LayerNorm(x + Dropout(Dense(SubLayer(x))))

and both sublayers of an encoder layer end this way, so one module serves both.
Legend: B batch, S sequence length, H hidden size, I intermediate size.
"""

# The two uses:
# - after attention, Dense is the output projection W^O (H -> H), named `attention.output.*` in checkpoints;
# - after the feed-forward, Dense is W₂ (I -> H), named `output.*`.
# (Pre-LN transformers, GPT-2 onwards, normalise before the sublayer instead; BERT's weights assume post-LN.)

from minibert import functional as F
from minibert.nn.fusion import fused_ops
from minibert.nn.layers import Dropout, LayerNorm, Linear
from minibert.nn.module import Module


class SublayerOutput(Module):
    """LayerNorm(residual + Dropout(Dense(h))). HF's `BertSelfOutput` and `BertOutput`."""

    def __init__(self, in_features, hidden_size, dropout_prob, layer_norm_eps, rng, std=0.02):
        super().__init__()
        self.dense = Linear(in_features, hidden_size, rng, std)
        self.LayerNorm = LayerNorm(hidden_size, layer_norm_eps)  # capitalised: HF's checkpoint name
        self.dropout = Dropout(dropout_prob, rng)

    def forward(self, h, residual):
        """h (B, S, in_features) from the sublayer, residual (B, S, H) its input -> (B, S, H)."""
        h = self.dense(h)
        if not fused_ops():  # the plain ops (the default; nn/fusion.py)
            return self.LayerNorm(residual + self.dropout(h))
        norm = self.LayerNorm  # the same, as one op
        return F.dropout_add_layer_norm(h, residual, norm.weight, norm.bias, norm.eps, self.dropout.p, self.training,
                                        self.dropout.rng)
