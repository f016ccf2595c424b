"""Matrix multiplication c = a @ b, 2-D or batched: the bulk of BERT's arithmetic.

Shapes: a (..., M, K), b (..., K, N) -> c (..., M, N), with identical leading (batch) axes or both 2-D.
The caller (the autograd `@`) broadcasts batch axes itself. Legend: M rows of a, K the summed axis, N columns
of b. Under both backends the product is NumPy's `a @ b`, which calls BLAS (OpenBLAS here), hand-tuned
assembly that no loop of ours beat (lessons/blocked_matmul.py is the loop kernel lesson 04 times against it).
During training BLAS runs on one thread, and `matmul_blas` cuts each large product into as many parts as
there are threads and computes them at once, one on each (see minibert/fast/process.py for why).
"""

import functools

import numpy as np

from minibert.errors import ShapeError
from minibert.kernels.arrays import DtypeError, float_array
from minibert.kernels.parallel import matmul_parts, run_together

# Products with less work than this (M * K * N, times the batch) are not cut in parts: handing a part to
# another thread costs some tens of microseconds, what BLAS needs for about 4 million multiply-adds.
SPLIT_MIN_WORK = 1 << 22


# ---------------------------------------------------------------------------------------------------------
# Readable reference: BLAS through NumPy (the formula itself, and what the library runs)

def matmul_forward_numpy(a, b, out=None):
    return np.matmul(a, b, out=out)  # (..., M, N)


def matmul_backward_numpy(grad_c, a, b):
    # c = a @ b, i.e. c_mn = sum_k a_mk b_kn  =>  grad_a = grad_c @ b^T,  grad_b = a^T @ grad_c
    return grad_c @ b.swapaxes(-1, -2), a.swapaxes(-1, -2) @ grad_c


# ---------------------------------------------------------------------------------------------------------
# BLAS on our threads: one product in parts computed at once

def matmul_blas(a, b, out=None):
    """a @ b by BLAS (into `out` if given: any array of c's shape, strided views included). While
    the process plan shares a product among P threads, a large one is cut into P parts: blocks of the batch
    when there is one, else of a's rows (or of b's columns when b has more), each part written into its own
    slice of c. NumPy lets go of Python's lock inside BLAS, so the parts really run at the same time."""
    parts = matmul_parts()
    if parts == 1 or _work(a, b) < SPLIT_MIN_WORK or (a.ndim > 2 and a.shape[0] < parts):
        return matmul_forward_numpy(a, b, out)
    c = _output(a, b) if out is None else out
    run_together(_parts_of_product(a, b, c, parts))
    return c


def matmul_pair_blas(a1, b1, a2, b2, out1=None, out2=None):
    """(a1 @ b1, a2 @ b2) by BLAS: the two products of a backward pass (grad_a and grad_b), which cost the
    same. While the process plan shares the cores, each product goes whole to half of the threads, and both
    run at once, rather than one after the other, each cut in P parts. Larger parts run faster in BLAS, and
    the incoming gradient both products read is fetched from memory once. `out1`, `out2`: where to write the
    products, as in matmul_blas."""
    parts = matmul_parts()
    if parts == 1 or _work(a1, b1) + _work(a2, b2) < SPLIT_MIN_WORK or (a1.ndim > 2 and a1.shape[0] < parts):
        return matmul_blas(a1, b1, out1), matmul_blas(a2, b2, out2)
    c1 = _output(a1, b1) if out1 is None else out1
    c2 = _output(a2, b2) if out2 is None else out2
    run_together(_parts_of_product(a1, b1, c1, parts // 2) + _parts_of_product(a2, b2, c2, parts - parts // 2))
    return c1, c2


def _work(a, b):
    return a.size * b.shape[-1]  # multiply-adds of a @ b


def _output(a, b):
    return np.empty(a.shape[:-1] + b.shape[-1:], dtype=np.result_type(a, b))


def _parts_of_product(a, b, c, count):
    """`count` tasks that together compute c = a @ b in place, each on its own block of c."""
    if a.ndim > 2:  # blocks of the batch (a and b have the same leading axes)
        length = a.shape[0]

        def part(block):
            return a[block], b[block], c[block]
    elif a.shape[0] >= b.shape[1]:  # blocks of a's rows
        length = a.shape[0]

        def part(block):
            return a[block], b, c[block]
    else:  # blocks of b's columns
        length = b.shape[1]

        def part(block):
            return a, b[:, block], c[:, block]
    bounds = [length * i // count for i in range(count + 1)]  # a few integers: cheaper than np.linspace
    tasks = []
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        a_part, b_part, c_part = part(slice(start, stop))
        tasks.append(functools.partial(np.matmul, a_part, b_part, out=c_part))
    return tasks


def matmul_backward_blas(grad_c, a, b):
    # matmul_backward_numpy's two products, at once
    return matmul_pair_blas(grad_c, _transposed(b), _transposed(a), grad_c)


def _transposed(x):
    return x.swapaxes(-1, -2)  # (..., R, C) -> (..., C, R), a view


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def _checked(a, b, op):
    a, b = float_array(a, "a", op), float_array(b, "b", op)
    if a.dtype != b.dtype:
        raise DtypeError(f"{op}: a is {a.dtype} but b is {b.dtype}; cast one so both have the same dtype")
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"{op}: shapes {a.shape} and {b.shape} do not fit; need (..., M, K) and (..., K, N) "
                         "with the same leading axes (broadcast them first)")
    return a, b


def _check_out(out, a, b, op):
    expected = a.shape[:-1] + b.shape[-1:]
    if out is not None and (out.shape != expected or out.dtype != a.dtype):
        raise ShapeError(f"{op}: out is {out.dtype} {out.shape}; a {a.shape} @ b {b.shape} needs {a.dtype} "
                         f"{expected}")


def matmul_forward(a, b, out=None):
    """c = a @ b for a (..., M, K), b (..., K, N) with the same leading axes; into `out` if given."""
    a, b = _checked(a, b, "matmul_forward")
    _check_out(out, a, b, "matmul_forward")
    return matmul_blas(a, b, out)


def matmul_pair(a1, b1, a2, b2, out1=None, out2=None):
    """(a1 @ b1, a2 @ b2), two independent products computed at once where the cores are shared (see
    `matmul_pair_blas`): what a backward pass with two gradients to compute calls. Into `out1`, `out2` if
    given."""
    a1, b1 = _checked(a1, b1, "matmul_pair")
    a2, b2 = _checked(a2, b2, "matmul_pair")
    _check_out(out1, a1, b1, "matmul_pair")
    _check_out(out2, a2, b2, "matmul_pair")
    return matmul_pair_blas(a1, b1, a2, b2, out1, out2)


def matmul_backward(grad_c, a, b):
    """(grad_a, grad_b) = (grad_c @ b^T, a^T @ grad_c)."""
    op = "matmul_backward"
    a, b = _checked(a, b, op)
    grad_c = float_array(grad_c, "grad_c", op).astype(a.dtype, copy=False)
    expected = a.shape[:-1] + b.shape[-1:]
    if grad_c.shape != expected:
        raise ShapeError(f"{op}: grad_c has shape {grad_c.shape}; a {a.shape} @ b {b.shape} gives {expected}")
    return matmul_backward_blas(grad_c, a, b)
