"""One switch for the fused ops: plain by default, fast on request.

By default every layer runs the plain ops a lesson shows, so a debugger steps through the code being taught.
A fused op computes the same numbers, up to rounding, in fewer passes over memory; with the switch on, the
layers that have one take the short branch beside their plain body.

    minibert.use_fused_ops()              # from here on, as `pretrain` and `finetune` train
    with minibert.use_fused_ops(False):   # or for one block only, then as before
        ...
"""

# The layers with a fused branch:
# - `MultiHeadSelfAttention`: q, k and v from one Linear, then `F.self_attention` (softmax and dropout inside);
# - `FeedForward`: `F.bias_gelu`, GELU with the first Linear's bias added in its own pass;
# - `SublayerOutput`: `F.dropout_add_layer_norm`, LayerNorm(residual + Dropout(h)) in one kernel.

_fused = False


def fused_ops():
    """Whether the layers call the fused ops now."""
    return _fused


class use_fused_ops:
    """Switch the fused ops on (or off, with False) from this call on; used as a `with` block, the switch
    holds for the block and the one before is restored after (as `torch.set_grad_enabled`)."""

    def __init__(self, on=True):
        global _fused
        self.before, _fused = _fused, bool(on)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _fused
        _fused = self.before
