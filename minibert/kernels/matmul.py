"""Matrix multiplication c = a @ b, 2-D or batched: the bulk of BERT's arithmetic.

Shapes: a (..., M, K), b (..., K, N) -> c (..., M, N), with identical leading (batch) axes or both 2-D.
The caller (the autograd `@`) broadcasts batch axes itself. Legend: M rows of a, K the summed axis, N columns
of b. Under both backends the product is NumPy's `a @ b`, which calls BLAS (OpenBLAS here), hand-tuned
assembly that no loop of ours beat (lessons/blocked_matmul.py is the loop kernel lesson 04 times against it),
so what this file adds is the checks.
"""

from minibert.errors import ShapeError
from minibert.kernels.dispatch import DtypeError, float_array, like

# ---------------------------------------------------------------------------------------------------------
# The formula: BLAS through NumPy


def matmul_forward_numpy(a, b):
    return a @ b  # (..., M, N)


def matmul_backward_numpy(grad_c, a, b):
    # BEGIN EXERCISE matmul_backward: grad_a = grad_c·bᵀ, grad_b = aᵀ·grad_c (transpose the last two axes)
    # c = a @ b, i.e. c_mn = sum_k a_mk b_kn  =>  grad_a = grad_c @ b^T,  grad_b = a^T @ grad_c
    return grad_c @ b.swapaxes(-1, -2), a.swapaxes(-1, -2) @ grad_c
    # END EXERCISE


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def check_operands(a, b, op):
    """a and b as float arrays of one dtype, shaped (..., M, K) and (..., K, N) with the same leading axes;
    anything else is refused naming both shapes."""
    a, b = float_array(a, "a", op), float_array(b, "b", op)
    if a.dtype != b.dtype:
        raise DtypeError(f"{op}: a is {a.dtype} but b is {b.dtype}; cast one so both have the same dtype")
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"{op}: shapes {a.shape} and {b.shape} do not fit; need (..., M, K) and (..., K, N) "
                         "with the same leading axes (broadcast them first)")
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"{op}: shapes {a.shape} and {b.shape} do not fit: the last axis of a ({a.shape[-1]}) "
                         f"must equal the second-to-last of b ({b.shape[-2]})")
    return a, b


def matmul_forward(a, b):
    """c = a @ b for a (..., M, K), b (..., K, N) with the same leading axes."""
    a, b = check_operands(a, b, "matmul_forward")
    return matmul_forward_numpy(a, b)


def matmul_backward(grad_c, a, b):
    """(grad_a, grad_b) = (grad_c @ b^T, a^T @ grad_c)."""
    op = "matmul_backward"
    a, b = check_operands(a, b, op)
    grad_c = like(grad_c, a, "grad_c", op)
    expected = a.shape[:-1] + b.shape[-1:]
    if grad_c.shape != expected:
        raise ShapeError(f"{op}: grad_c has shape {grad_c.shape}; a {a.shape} @ b {b.shape} gives {expected}")
    return matmul_backward_numpy(grad_c, a, b)
