"""The position-wise feed-forward network (Vaswani et al. 2017, §3.3): FFN(x) = W₂·act(W₁·x + b₁) + b₂.

Applied to every token on its own, it widens each vector from H to the intermediate size I (4·H in BERT),
applies the activation, and narrows it back. The widening half is here, under BERT's checkpoint name
`intermediate.dense`. The narrowing W₂ lives where BERT's checkpoints keep it, in the sublayer that follows
(`output.dense`, see `sublayer.py`), just as attention's output projection does.

Legend: B batch, S sequence length, H hidden size, I intermediate size.
"""

from minibert import functional as F
from minibert.nn.activations import GELU_FORMS, activation
from minibert.nn.fusion import fused_ops
from minibert.nn.layers import Linear
from minibert.nn.module import Module


class FeedForward(Module):
    """act(x·W₁ᵀ + b₁): (B, S, H) -> (B, S, I). HF's `BertIntermediate`."""

    def __init__(self, hidden_size, intermediate_size, hidden_act, rng, std=0.02):
        super().__init__()
        self.dense = Linear(hidden_size, intermediate_size, rng, std)
        self.hidden_act = hidden_act
        self.act = activation(hidden_act)

    def forward(self, x):
        if not fused_ops() or self.hidden_act not in GELU_FORMS:  # the plain ops (the default; nn/fusion.py)
            return self.act(self.dense(x))  # (B, S, H) -> (B, S, I)
        # the same, with the bias added inside GELU's pass
        return F.bias_gelu(F.linear(x, self.dense.weight), self.dense.bias, GELU_FORMS[self.hidden_act])
