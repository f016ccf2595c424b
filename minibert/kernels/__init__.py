"""The kernel layer: arrays in, arrays out; it knows nothing of Tensor.

Each module pairs a readable NumPy reference with a Numba kernel, and a dispatcher picks one according to
the backend switch (`set_backend("numba" | "numpy")`, or the MINIBERT_BACKEND environment variable).
"""

from minibert.kernels.add_norm import add_norm_backward, add_norm_forward
from minibert.kernels.arrays import FLOAT_DTYPES, DtypeError
from minibert.kernels.attention_weights import attention_weights_backward, attention_weights_forward
from minibert.kernels.backend import get_backend, set_backend, use_backend
from minibert.kernels.cross_entropy import softmax_cross_entropy_backward, softmax_cross_entropy_forward
from minibert.kernels.dropout import draw_seed, dropout_backward, dropout_forward
from minibert.kernels.gelu import (
    bias_gelu_backward,
    bias_gelu_forward,
    bias_gelu_with_slope,
    gelu_backward,
    gelu_forward,
    gelu_with_slope,
)
from minibert.kernels.layernorm import layer_norm_backward, layer_norm_forward
from minibert.kernels.matmul import matmul_backward, matmul_forward, matmul_pair
from minibert.kernels.scatter import scatter_add_rows
from minibert.kernels.softmax import (
    log_softmax_backward,
    log_softmax_forward,
    softmax_backward,
    softmax_forward,
)

__all__ = [
    "FLOAT_DTYPES",
    "DtypeError",
    "add_norm_backward",
    "add_norm_forward",
    "attention_weights_backward",
    "attention_weights_forward",
    "bias_gelu_backward",
    "bias_gelu_forward",
    "bias_gelu_with_slope",
    "draw_seed",
    "dropout_backward",
    "dropout_forward",
    "gelu_backward",
    "gelu_forward",
    "gelu_with_slope",
    "get_backend",
    "layer_norm_backward",
    "layer_norm_forward",
    "log_softmax_backward",
    "log_softmax_forward",
    "matmul_backward",
    "matmul_forward",
    "matmul_pair",
    "scatter_add_rows",
    "set_backend",
    "softmax_backward",
    "softmax_cross_entropy_backward",
    "softmax_cross_entropy_forward",
    "softmax_forward",
    "use_backend",
]
