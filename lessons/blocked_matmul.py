"""A blocked matrix product in Numba: lesson 04's picture of how BLAS gets its speed.

minibert never runs this: every product in the library goes to NumPy's BLAS (OpenBLAS), which was faster at
every size measured (`bench/kernel_speed.py` prints the sweep; docs/performance.md keeps the figures). It is here
to read, and to time against BLAS in lesson 04 and in `bench/kernel_speed.py`. `tests/test_kernels.py` checks it
against `a @ b`.

Shapes: a (..., M, K), b (..., K, N) -> c (..., M, N), with the same leading (batch) axes.
Legend: M rows of a, K the summed axis, N columns of b, G batch (the product of the leading axes).
"""

import numpy as np
from numba import njit, prange

# One task computes a (TILE_M, TILE_N) block of c, summing over K in slices of TILE_K: its accumulator (16 KB
# in float32) stays in the L1 cache, and the slice of b it reads (TILE_K, TILE_N) in the L2 cache, so each
# value fetched from memory is reused many times.
TILE_M = 32
TILE_N = 128
TILE_K = 256


@njit(parallel=True, cache=True)
def blocked_matmul_kernel(a, b):
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


def blocked_matmul(a, b):
    """c = a @ b for float arrays a (..., M, K), b (..., K, N) of one dtype with the same leading axes."""
    c = blocked_matmul_kernel(_as_batches(a), _as_batches(b))  # (G, M, N)
    return c.reshape(a.shape[:-1] + b.shape[-1:])
