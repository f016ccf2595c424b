"""Matrix products shared among the process plan's threads: the products the speed layer's ops compute.

Inside the plan BLAS runs on one thread (process.py says why), so a large product is cut into as many parts
as there are threads and the parts are computed at once, one on each (threads.py runs them); NumPy lets go of
Python's lock inside BLAS, so the parts really run at the same time. Outside the plan, or for a small
product, each is one BLAS call: NumPy's `a @ b`, as in the core, after the core's one check of the operands
(`check_matmul` in minibert/kernels/dispatch.py).
Two things only the speed layer needs: `out=`, so the fused attention writes its products straight into
strided views, and `matmul_pair`, a backward's two products at once.
"""

import functools

import numpy as np

from minibert.errors import ShapeError
from minibert.fast.threads import matmul_parts, run_together
from minibert.kernels.dispatch import check_matmul

# Products with less work than this (M * K * N, times the batch) are not cut in parts: handing a part to
# another thread costs some tens of microseconds, what BLAS needs for about 4 million multiply-adds.
SPLIT_MIN_WORK = 1 << 22


def matmul_forward(a, b, out=None):
    """c = a @ b for a (..., M, K), b (..., K, N) with the same leading axes; into `out` if given (any array
    of c's shape and dtype, strided views included)."""
    a, b = check_matmul(a, b, "matmul_forward")
    _check_out(out, a, b, "matmul_forward")
    return _product(a, b, out)


def matmul_pair(a1, b1, a2, b2, out1=None, out2=None):
    """(a1 @ b1, a2 @ b2), two independent products computed at once: what a backward pass with two
    gradients to compute calls. While the plan shares the cores, each product goes whole to half of the
    threads, and both run at once, rather than one after the other, each cut in P parts: larger parts run
    faster in BLAS, and the incoming gradient both products read is fetched from memory once. Into `out1`,
    `out2` if given."""
    a1, b1 = check_matmul(a1, b1, "matmul_pair")
    a2, b2 = check_matmul(a2, b2, "matmul_pair")
    _check_out(out1, a1, b1, "matmul_pair")
    _check_out(out2, a2, b2, "matmul_pair")
    parts = matmul_parts()
    if parts == 1 or _work(a1, b1) + _work(a2, b2) < SPLIT_MIN_WORK or (a1.ndim > 2 and a1.shape[0] < parts):
        return _product(a1, b1, out1), _product(a2, b2, out2)
    c1 = _output(a1, b1) if out1 is None else out1
    c2 = _output(a2, b2) if out2 is None else out2
    run_together(_parts_of_product(a1, b1, c1, parts // 2) + _parts_of_product(a2, b2, c2, parts - parts // 2))
    return c1, c2


def _check_out(out, a, b, op):
    expected = a.shape[:-1] + b.shape[-1:]
    if out is not None and (out.shape != expected or out.dtype != a.dtype):
        raise ShapeError(f"{op}: out is {out.dtype} {out.shape}; a {a.shape} @ b {b.shape} needs {a.dtype} "
                         f"{expected}")


def _product(a, b, out):
    """a @ b by BLAS, into `out` if given. While the plan shares a product among P threads, a large one is cut
    into P parts: blocks of the batch when there is one, else of a's rows (or of b's columns when b has more),
    each part written into its own slice of c."""
    parts = matmul_parts()
    if parts == 1 or _work(a, b) < SPLIT_MIN_WORK or (a.ndim > 2 and a.shape[0] < parts):
        return np.matmul(a, b, out=out)
    c = _output(a, b) if out is None else out
    run_together(_parts_of_product(a, b, c, parts))
    return c


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
