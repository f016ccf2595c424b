"""Threads: when a parallel Numba kernel is worth them, and how training shares the cores.

Small inputs run on one thread. Starting a parallel loop means waking the other threads and waiting for
the slowest. On a tiny array that costs far more than the work: measured here (2 cores, other jobs
running, load average ~10), a row softmax of a (4, 8) array took 8 us at best but 28 ms at the median in
parallel, since a woken thread waits for a core; on one thread it took 6.5 us every time. Gradient checks
and single-sentence inference are made of such calls. From about 64K elements the work (~1 ns each)
outweighs the start-up, and both cores pay.

Training shares the cores between matmuls and kernels (`training_threads`). OpenBLAS runs a matmul on
threads of its own, and after each call they keep spinning, ready for the next one, for about a tenth of a
second (2**28 cycles, OpenBLAS's default); a parallel Numba kernel started meanwhile finds its cores taken.
Numba's "omp" layer does the same the other way round. So training gives every core to threads that sleep
when idle: OpenBLAS runs on one thread, each large matmul is cut into one part per thread and the parts run
at once (`run_together`, used by matmul.py's `matmul_blas`), and the Numba kernels run on all threads of the
"workqueue" layer, whose threads wait without spinning. `training_threads` asks Numba for that layer if no
parallel kernel has run in the process yet and you chose none (NUMBA_THREADING_LAYER); where another layer
already runs (and omp was not told OMP_WAIT_POLICY=passive), the kernels run on one thread instead. The
workqueue layer must not be entered from two Python threads at once, which training never does. Measured on
2 cores, mini's step with BERT's dropout 0.1 (bench/compare_torch.py --only compare, three alternating runs
of each, best of 5 steps): 0.372-0.387 s with BLAS's own threads and one-thread kernels, as before;
0.329-0.347 s shared this way; 0.348-0.364 s with the matmuls shared and one-thread kernels (the omp layer).
A prototype with the kernels on two spinning omp threads took 0.50 s. The price is paid by small products:
handing a part to a sleeping thread takes tens of microseconds, where OpenBLAS's spinning threads start at
once, so a (640, 256) @ (256, 256) takes 0.38 ms instead of 0.18 ms. Fine-tuning on the short sentences of
the synthetic sentiment set takes 14-15 s instead of 12.5 s.
"""

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

import numba

from minibert.runtime.blas import openblas

PARALLEL_MIN_ELEMENTS = 1 << 16
QUIET_LAYER = "workqueue"  # Numba's threading layer whose idle threads sleep

_sharing = False  # inside training_threads
_helpers = None  # during training_threads: the threads that compute all but one part of a split matmul
_parts = 1  # how many threads share one large matmul (1: BLAS's own threads do)


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


def matmul_parts():
    """How many threads share one large matmul now: 1 outside `training_threads`."""
    return _parts


def run_together(tasks):
    """Run the callables at the same time, the last on this thread and the others on the helper threads of
    `training_threads`; return when all are done."""
    pending = [_helpers.submit(task) for task in tasks[:-1]]
    tasks[-1]()
    for future in pending:
        future.result()


def _started_layer():
    """The threading layer Numba runs parallel kernels on, or None before the first one (it is fixed then)."""
    try:
        return numba.threading_layer()
    except ValueError:
        return None


def _choose_quiet_layer():
    """Ask Numba for the workqueue layer, unless it has started one already or the user chose a layer."""
    if _started_layer() is None and "NUMBA_THREADING_LAYER" not in os.environ:
        numba.config.THREADING_LAYER = QUIET_LAYER


def _idle_threads_sleep():
    """Whether Numba's threads sleep between kernels: the workqueue layer, or omp told to be passive."""
    layer = _started_layer() or numba.config.THREADING_LAYER  # before the start: the configured one
    return layer == QUIET_LAYER or (layer == "omp" and os.environ.get("OMP_WAIT_POLICY", "").lower() == "passive")


@contextlib.contextmanager
def training_threads(threads=None):
    """Run the block with the cores shared as the module's docstring says, on `threads` cores (None: every
    core Numba may use), then restore the thread counts.

    Where Numba's threads would spin (another layer started already), the matmuls are still cut in parts
    but the kernels get one thread: every kernel gives the same bits on any number of threads, so a run
    computes the same numbers either way. Where NumPy's BLAS is not an OpenBLAS we can reach (blas.py),
    BLAS keeps its own threads for the matmuls and the kernels run on one thread."""
    global _sharing, _helpers, _parts
    if _sharing:  # an enclosing block shares the cores already (a bench holding them for its process)
        yield
        return
    count = numba.config.NUMBA_NUM_THREADS if threads is None else min(threads, numba.config.NUMBA_NUM_THREADS)
    _choose_quiet_layer()
    blas = openblas()
    kernels_before = numba.get_num_threads()
    blas_before = blas.threads if blas is not None else None
    if blas is None:
        numba.set_num_threads(1)
    else:
        blas.threads = 1
        numba.set_num_threads(count if _idle_threads_sleep() else 1)
        _helpers, _parts = (ThreadPoolExecutor(count - 1) if count > 1 else None), count
    _sharing = True
    try:
        yield
    finally:
        if _helpers is not None:
            _helpers.shutdown()
        _sharing, _helpers, _parts = False, None, 1
        numba.set_num_threads(kernels_before)
        if blas_before is not None:
            blas.threads = blas_before
