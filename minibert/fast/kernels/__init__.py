"""The speed layer's kernels: several ops fused into one pass over memory, each beside its plain-NumPy
reference (the core's kernels one after the other) and switched by the same `set_backend`; and the matrix
products the process plan shares among its threads (matmul.py)."""

from minibert.fast.kernels.add_norm import add_norm_backward, add_norm_forward
from minibert.fast.kernels.attention_weights import attention_weights_backward, attention_weights_forward
from minibert.fast.kernels.bias_gelu import bias_gelu_backward, bias_gelu_with_slope
from minibert.fast.kernels.matmul import matmul_forward, matmul_pair
from minibert.fast.kernels.seeded_dropout import draw_seed, dropout_backward, dropout_forward

__all__ = [
    "add_norm_backward",
    "add_norm_forward",
    "attention_weights_backward",
    "attention_weights_forward",
    "bias_gelu_backward",
    "bias_gelu_with_slope",
    "draw_seed",
    "dropout_backward",
    "dropout_forward",
    "matmul_forward",
    "matmul_pair",
]
