"""One switch for the fused ops: whether layers call one fused op where several plain ops would do.

A fused op computes the same numbers as the plain ops one after the other, up to rounding, in fewer passes
over memory. Layers that have one call it by default and keep the plain version beside it, one `if` away:
- `MultiHeadSelfAttention`: q, k and v from one Linear with the three weights stacked, then
  `F.self_attention` (scores, scaled masked softmax with dropout, context; heads never copied);
- `FeedForward`: `F.bias_gelu`, GELU with the first Linear's bias added in its own pass;
- `SublayerOutput`: `F.dropout_add_layer_norm`, LayerNorm(residual + Dropout(h)) in one kernel.

    with plain_ops():
        loss = pretraining_loss(model(...), ...)   # every layer as the plain ops, to read or to compare

The tests run a model both ways and compare the losses and gradients.
"""

import contextlib

_fused = True


def fused_ops():
    """True unless inside `plain_ops()`."""
    return _fused


@contextlib.contextmanager
def plain_ops():
    """Inside the block, layers call the plain ops instead of the fused ones."""
    global _fused
    before, _fused = _fused, False
    try:
        yield
    finally:
        _fused = before
