"""How minibert shares the cores, set once for the process the first time a kernel or a matmul runs.

OpenBLAS's idle threads spin for a while after each matmul, and so do Numba's "omp" threads after each
kernel: a parallel kernel started meanwhile finds its cores taken. So the process plan gives every core to
threads that sleep when idle: OpenBLAS runs on one thread, each large matmul is cut into one part per thread
run at once (`run_together`, used by kernels/matmul.py), and the Numba kernels run on the "workqueue" layer.
The plan also keeps freed memory for the next step (allocator.py). It applies on first use, not at import,
so a process that never computes is untouched; `leave_process_alone()` or MINIBERT_PROCESS_PLAN=off opts
out. Small kernels run on one thread (`launch`). Figures: docs/performance.md, "Runtime: threads and memory".
"""

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

import numba

from minibert.runtime.allocator import reuse_freed_memory
from minibert.runtime.blas import openblas

PARALLEL_MIN_ELEMENTS = 1 << 16  # below this, waking the other threads costs more than the work saves
QUIET_LAYER = "workqueue"  # Numba's threading layer whose idle threads sleep
PLAN_VARIABLE = "MINIBERT_PROCESS_PLAN"  # "off" (or 0, false, no): leave the process's settings alone
OFF_WORDS = ("off", "0", "false", "no")

_plan = "pending"  # "pending" until the first kernel or matmul, then "on" or "off"
_found = None  # with the plan on: (Numba's thread count, OpenBLAS's or None) as the plan found them
_helpers = None  # with the plan on: the threads that compute all but one part of a split matmul
_parts = 1  # how many threads share one large matmul (1: BLAS's own threads do)


def launch(kernel, size, *args):
    """kernel(*args) on every Numba thread when it works on `size` >= PARALLEL_MIN_ELEMENTS numbers, else on
    one thread (prange loops then run in order, like range)."""
    _first_use()
    if size >= PARALLEL_MIN_ELEMENTS:
        return kernel(*args)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(threads)


def matmul_parts():
    """How many threads share one large matmul now: 1 when the plan is off."""
    _first_use()
    return _parts


def run_together(tasks):
    """Run the callables at the same time, the last on this thread and the others on the plan's helper
    threads; return when all are done."""
    pending = [_helpers.submit(task) for task in tasks[:-1]]
    tasks[-1]()
    for future in pending:
        future.result()


# ----- the process plan -----

def _first_use():
    if _plan == "pending":
        _apply_plan()


def _apply_plan():
    global _plan, _found
    if os.environ.get(PLAN_VARIABLE, "on").strip().lower() in OFF_WORDS:
        _plan = "off"
        return
    _plan = "on"
    _choose_quiet_layer()  # before anything asks Numba for its threads: that starts a layer
    blas = openblas()
    _found = (numba.get_num_threads(), blas.threads if blas is not None else None)
    reuse_freed_memory()  # each step allocates the same large arrays: keep their pages
    _share_cores(numba.config.NUMBA_NUM_THREADS)


def leave_process_alone():
    """Opt out of the process plan: minibert then never sets BLAS's or Numba's threads, nor malloc's options.

    Call it before the first computation (or set MINIBERT_PROCESS_PLAN=off). Called later, it gives BLAS and
    Numba back the thread counts the plan found; malloc's options, once set, stay for the process."""
    global _plan, _found
    if _plan == "on":
        _share_cores(1)
        kernels, blas_threads = _found
        numba.set_num_threads(kernels)
        if blas_threads is not None:
            openblas().threads = blas_threads
    _plan, _found = "off", None


def plan_is_on():
    """Whether the process plan runs (applying it now if nothing has run yet)."""
    _first_use()
    return _plan == "on"


def _share_cores(count):
    """Give `count` threads to the matmuls and the kernels, as the module docstring says.

    Where Numba's threads would spin (another layer started already, or omp not told
    OMP_WAIT_POLICY=passive), the matmuls are still cut in parts but the kernels get one thread: every
    kernel gives the same bits on any number of threads. Where NumPy's BLAS is not an OpenBLAS we can reach
    (blas.py), BLAS keeps its own threads and the kernels run on one thread."""
    global _helpers, _parts
    _choose_quiet_layer()
    blas = openblas()
    if _helpers is not None:
        _helpers.shutdown()
    _helpers, _parts = None, 1
    if blas is None:
        numba.set_num_threads(1)
        return
    blas.threads = 1
    numba.set_num_threads(count if _idle_threads_sleep() else 1)
    _helpers, _parts = (ThreadPoolExecutor(count - 1) if count > 1 else None), count


def _new_helpers_after_fork():
    """A forked child has none of its parent's threads: give the plan helpers of its own."""
    global _helpers
    if _helpers is not None:
        _helpers = ThreadPoolExecutor(_parts - 1)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_new_helpers_after_fork)


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
    """Run the block on `threads` cores (None: as the plan has them, every core), then as before: the
    `threads` choice of a run (RunConfig.threads, FineTuneConfig.threads). With the plan off, only Numba's
    kernel threads are bounded; BLAS and malloc stay as the process has them."""
    _first_use()
    count = None if threads is None else min(threads, numba.config.NUMBA_NUM_THREADS)
    if _plan == "on" and count is not None and count != _parts:
        parts, kernel_threads = _parts, numba.get_num_threads()
        _share_cores(count)
        try:
            yield
        finally:
            _share_cores(parts)
            numba.set_num_threads(kernel_threads)
    elif _plan == "off" and count is not None:
        before = numba.get_num_threads()
        numba.set_num_threads(min(count, before))
        try:
            yield
        finally:
            numba.set_num_threads(before)
    else:
        yield
