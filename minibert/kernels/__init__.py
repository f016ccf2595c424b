"""The kernel layer: arrays in, arrays out; it knows nothing of Tensor.

The contract, after llm.c's dev/cuda: each op's reference is the formula as a textbook writes it, in plain
NumPy, and the fast version (a Numba kernel) is checked against that reference by the tests.
`set_backend("numba" | "numpy")` (or MINIBERT_BACKEND) runs the whole library on the kernels or on their
references; matrix products go to BLAS under both (matmul.py). Each op's file ends with its dispatchers, which
check their arrays and pick the backend (dispatch.py); simd.py holds the arithmetic the Numba loops share.
The fused kernels of the speed layer live in minibert/fast/kernels/, each beside its own reference.
"""

from minibert.kernels.cross_entropy import softmax_cross_entropy_backward, softmax_cross_entropy_forward
from minibert.kernels.dispatch import FLOAT_DTYPES, DtypeError, get_backend, set_backend, use_backend
from minibert.kernels.gelu import gelu_backward, gelu_forward
from minibert.kernels.layernorm import layer_norm_backward, layer_norm_forward
from minibert.kernels.matmul import matmul_backward, matmul_forward
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
    "gelu_backward",
    "gelu_forward",
    "get_backend",
    "layer_norm_backward",
    "layer_norm_forward",
    "log_softmax_backward",
    "log_softmax_forward",
    "matmul_backward",
    "matmul_forward",
    "scatter_add_rows",
    "set_backend",
    "softmax_backward",
    "softmax_cross_entropy_backward",
    "softmax_cross_entropy_forward",
    "softmax_forward",
    "use_backend",
]
