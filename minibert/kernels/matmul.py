"""Matrix multiplication c = a @ b, 2-D or batched: the bulk of BERT's arithmetic.

Shapes: a (..., M, K), b (..., K, N) -> c (..., M, N), with identical leading (batch) axes or both 2-D.
The caller (the autograd `@`) broadcasts batch axes itself. Inside, the kernels see (G, M, K) @ (G, K, N),
G = the product of the batch axes (1 for 2-D).
Legend: M rows of a, K the summed axis, N columns of b, G batch.

Three ways to compute it:
- `matmul_forward_numpy`: NumPy's `a @ b`, which calls BLAS (OpenBLAS here), hand-tuned assembly.
- `matmul_numba_kernel`: a blocked loop kernel in Numba, to read and to measure BLAS against.
- `matmul_forward`: what the library uses. The numpy backend is BLAS. The numba backend runs the loop
  kernel below BLAS_MIN_WORK and BLAS from there on; measured on these machines, BLAS wins at every size,
  so BLAS_MIN_WORK is 0 (see the constant for the figures).
During training BLAS runs on one thread, and `matmul_blas` cuts each large product into as many parts as
there are threads and computes them at once, one on each (see `training_threads` in threads.py for why).
"""

import functools

import numpy as np
from numba import njit, prange

from minibert.errors import ShapeError
from minibert.kernels.arrays import DtypeError, float_array
from minibert.kernels.backend import get_backend
from minibert.runtime.threads import matmul_parts, run_together

# Tile sizes of the loop kernel. One task computes a (TILE_M, TILE_N) block of c, summing over K in slices
# of TILE_K: its accumulator (16 KB in float32) stays in the L1 cache, and the slice of b it reads
# (TILE_K, TILE_N) in the L2 cache, so each value fetched from memory is reused many times.
TILE_M = 32
TILE_N = 128
TILE_K = 256

# Under the numba backend, products with M * K * N at or above this go to BLAS, smaller ones to the loop
# kernel. Measured with bench/kernels.py's sweep (2 cores, float32, OPENBLAS_CORETYPE unset, 2026-11):
#   (n, n) @ (n, n):         n = 4: loop 2.1 us, BLAS 0.8 us;  n = 32: 6.5 / 1.1;  n = 256: 854 / 79
#   64 x (n, n) @ (n, n):    n = 4: loop 6.7 us, BLAS 2.2 us;  n = 64: 932 / 242;  n = 128: 7559 / 883
# BLAS won at every size: even for tiny products, starting the loop kernel's parallel region costs more
# than a BLAS call, and for large ones OpenBLAS's register-blocked assembly runs 5-10x faster. So the
# crossover is 0 and every matmul goes to BLAS; the loop kernel is there to read, test and time.
BLAS_MIN_WORK = 0

# Products with less work than this (M * K * N, times the batch) are not cut in parts: handing a part to
# another thread costs some tens of microseconds, what BLAS needs for about 4 million multiply-adds.
SPLIT_MIN_WORK = 1 << 22


# ---------------------------------------------------------------------------------------------------------
# Readable reference: BLAS through NumPy

def matmul_forward_numpy(a, b, out=None):
    return np.matmul(a, b, out=out)  # (..., M, N)


def matmul_backward_numpy(grad_c, a, b):
    # c = a @ b, i.e. c_mn = sum_k a_mk b_kn  =>  grad_a = grad_c @ b^T,  grad_b = a^T @ grad_c
    return grad_c @ b.swapaxes(-1, -2), a.swapaxes(-1, -2) @ grad_c


# ---------------------------------------------------------------------------------------------------------
# BLAS on our threads: one product in parts computed at once

def matmul_blas(a, b, out=None):
    """a @ b by BLAS (into `out` if given: any array of c's shape, strided views included). While
    `training_threads` shares a product among P threads, a large one is cut into P parts: blocks of the batch
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
    same. While `training_threads` shares the cores, each product goes whole to half of the threads, and both
    run at once, rather than one after the other, each cut in P parts. Larger parts run faster in BLAS, and
    the incoming gradient both products read is fetched from memory once. Measured for mini's Linear
    backward shapes (2 threads, one product on each): 5-9% less time, e.g. (4096, 256) @ (256, 256) and its
    (256, 4096) @ (4096, 256): 2.49 ms against 2.74; (640, 256) @ (256, 8192) and its pair: 12.8 against
    13.8 ms. `out1`, `out2`: where to write the products, as in matmul_blas."""
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
    bounds = [length * i // count for i in range(count + 1)]  # 0.2 us; np.linspace takes 3.6 us
    tasks = []
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        a_part, b_part, c_part = part(slice(start, stop))
        tasks.append(functools.partial(np.matmul, a_part, b_part, out=c_part))
    return tasks


def matmul_backward_blas(grad_c, a, b):
    # matmul_backward_numpy's two products, at once
    return matmul_pair_blas(grad_c, _transposed(b), _transposed(a), grad_c)


# ---------------------------------------------------------------------------------------------------------
# Numba loop kernel

@njit(parallel=True, cache=True)
def matmul_numba_kernel(a, b):
    """c = a @ b for C-contiguous a (G, M, K), b (G, K, N) of one float dtype: tiled loops, tiles in parallel.

    The innermost loop runs along a row of b and a row of the accumulator, contiguous in memory, so LLVM
    turns it into SIMD instructions; it updates four rows of the tile at once, so each value of b loaded
    into a register is used four times. Sums stay in the input dtype, as in BLAS.
    """
    batch, rows, inner = a.shape
    cols = b.shape[2]
    c = np.empty((batch, rows, cols), dtype=a.dtype)
    tiles_m = (rows + TILE_M - 1) // TILE_M
    tiles_n = (cols + TILE_N - 1) // TILE_N
    for task in prange(batch * tiles_m * tiles_n):
        g = task // (tiles_m * tiles_n)
        i0 = (task // tiles_n) % tiles_m * TILE_M
        j0 = task % tiles_n * TILE_N
        height = min(TILE_M, rows - i0)
        width = min(TILE_N, cols - j0)
        fours = height // 4 * 4  # rows of the tile handled four at a time; the rest one at a time
        acc = np.zeros((TILE_M, TILE_N), dtype=a.dtype)
        for k0 in range(0, inner, TILE_K):
            for i in range(0, fours, 4):
                for k in range(k0, min(k0 + TILE_K, inner)):
                    a0 = a[g, i0 + i, k]
                    a1 = a[g, i0 + i + 1, k]
                    a2 = a[g, i0 + i + 2, k]
                    a3 = a[g, i0 + i + 3, k]
                    for j in range(width):
                        b_kj = b[g, k, j0 + j]
                        acc[i, j] += a0 * b_kj
                        acc[i + 1, j] += a1 * b_kj
                        acc[i + 2, j] += a2 * b_kj
                        acc[i + 3, j] += a3 * b_kj
            for i in range(fours, height):
                for k in range(k0, min(k0 + TILE_K, inner)):
                    a_ik = a[g, i0 + i, k]
                    for j in range(width):
                        acc[i, j] += a_ik * b[g, k, j0 + j]
        for i in range(height):
            for j in range(width):
                c[g, i0 + i, j0 + j] = acc[i, j]
    return c


def _as_batches(x):
    """x (..., R, C) as a C-contiguous (G, R, C) array."""
    return np.ascontiguousarray(x).reshape(-1, x.shape[-2], x.shape[-1])


def _transposed(x):
    return x.swapaxes(-1, -2)  # (..., R, C) -> (..., C, R), a view


def matmul_forward_numba(a, b):
    c = matmul_numba_kernel(_as_batches(a), _as_batches(b))  # (G, M, N)
    return c.reshape(a.shape[:-1] + b.shape[-1:])


def matmul_backward_numba(grad_c, a, b):
    # the same two products as matmul_backward_numpy, through the loop kernel
    return matmul_forward_numba(grad_c, _transposed(b)), matmul_forward_numba(_transposed(a), grad_c)


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


def _use_blas(a, b):
    if get_backend() == "numpy":
        return True
    return a.shape[-2] * a.shape[-1] * b.shape[-1] >= BLAS_MIN_WORK


def matmul_forward(a, b, out=None):
    """c = a @ b for a (..., M, K), b (..., K, N) with the same leading axes; into `out` if given."""
    a, b = _checked(a, b, "matmul_forward")
    _check_out(out, a, b, "matmul_forward")
    if _use_blas(a, b):
        return matmul_blas(a, b, out)
    c = matmul_forward_numba(a, b)
    if out is None:
        return c
    out[...] = c
    return out


def matmul_pair(a1, b1, a2, b2, out1=None, out2=None):
    """(a1 @ b1, a2 @ b2), two independent products computed at once where the cores are shared (see
    `matmul_pair_blas`): what a backward pass with two gradients to compute calls. Into `out1`, `out2` if
    given."""
    a1, b1 = _checked(a1, b1, "matmul_pair")
    a2, b2 = _checked(a2, b2, "matmul_pair")
    _check_out(out1, a1, b1, "matmul_pair")
    _check_out(out2, a2, b2, "matmul_pair")
    if _use_blas(a1, b1) and _use_blas(a2, b2):
        return matmul_pair_blas(a1, b1, a2, b2, out1, out2)
    return matmul_forward(a1, b1, out1), matmul_forward(a2, b2, out2)


def matmul_backward(grad_c, a, b):
    """(grad_a, grad_b) = (grad_c @ b^T, a^T @ grad_c)."""
    op = "matmul_backward"
    a, b = _checked(a, b, op)
    grad_c = float_array(grad_c, "grad_c", op).astype(a.dtype, copy=False)
    expected = a.shape[:-1] + b.shape[-1:]
    if grad_c.shape != expected:
        raise ShapeError(f"{op}: grad_c has shape {grad_c.shape}; a {a.shape} @ b {b.shape} gives {expected}")
    return (matmul_backward_blas if _use_blas(a, b) else matmul_backward_numba)(grad_c, a, b)
