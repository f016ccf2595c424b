"""The kernel layer: arrays in, arrays out; it knows nothing of Tensor.

The contract, after llm.c's dev/cuda: each op's reference is the formula as a textbook writes it, in plain
NumPy, and the fast version (a Numba kernel) is checked against that reference by the tests.
The fast one may be as clever as it needs to be; the reference may not. Where the two must agree bit for bit
(dropout's random draws), the textbook form stands beside the reference (`dropout.dropout_textbook`), and
it is the one the lessons show. `set_backend("numba" | "numpy")` (or MINIBERT_BACKEND) runs the whole
library on the kernels or on their references; matrix products go to BLAS under both (matmul.py).
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
