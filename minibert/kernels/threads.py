"""When a parallel Numba kernel is worth its threads: small inputs run on one thread.

Starting a parallel loop means waking the other threads and waiting for the slowest. On a tiny array that
costs far more than the work: measured here (2 cores, other jobs running, load average ~10), a row softmax
of a (4, 8) array took 8 us at best but 28 ms at the median in parallel, since a woken thread waits for a
core; on one thread it took 6.5 us every time. Gradient checks and single-sentence inference are made of
such calls. From about 64K elements the work (~1 ns each) outweighs the start-up, and both cores pay.
"""

import contextlib

import numba

PARALLEL_MIN_ELEMENTS = 1 << 16


def launch(kernel, size, *args):
    """kernel(*args) on every Numba thread when it works on `size` >= PARALLEL_MIN_ELEMENTS numbers, else on
    one thread (prange loops then run in order, like range)."""
    if size >= PARALLEL_MIN_ELEMENTS:
        return kernel(*args)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(threads)


@contextlib.contextmanager
def kernel_threads(threads):
    """Run the block with `threads` Numba threads (None: leave the count as it is), then restore it.

    Training runs its kernels on one thread by default: NumPy's BLAS already uses every core for the
    matmuls, and its threads keep spinning after each call, so a parallel Numba kernel fights them for the
    cores (see `RunConfig.threads` in minibert/train/presets.py for the measurement)."""
    before = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(before)
