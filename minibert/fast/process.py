"""The process plan: how a training run shares the cores and keeps its memory, applied only when asked.

OpenBLAS's idle threads spin for a while after each matmul, and so do Numba's "omp" threads after each kernel:
a parallel kernel started meanwhile finds its cores taken. So inside `process_plan()` every core goes to
threads that sleep when idle: every OpenBLAS in the process runs on one thread (NumPy's, and another
package's, such as the one SciPy's wheels ship), each large matmul of the speed layer's ops is cut into one
part per thread run at once (threads.py, fast/kernels/matmul.py), and the Numba kernels run on the "workqueue"
layer. The plan also keeps freed memory for the next step (allocator.py). Nothing of this happens on import or
on plain use of minibert: the training commands enter the plan where their code shows it, and a user's loop
may too. The plan is made for an accelerated model (`accelerate`), whose every product is the speed layer's:
a plain model's products inside it run whole on BLAS's one thread.
Figures: docs/performance.md, "Runtime: threads and memory".
"""

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba

from minibert.fast.allocator import reuse_freed_memory
from minibert.fast.blas import openblas, openblas_at
from minibert.fast.threads import matmul_parts, share_matmuls

QUIET_LAYER = "workqueue"  # Numba's threading layer whose idle threads sleep

_process_set_up = False  # the one-time part (threading layer, malloc, fork hook) is done


@contextlib.contextmanager
def process_plan(threads=None):
    """Run the block with the plan on `threads` cores (None: every core Numba sees), then put BLAS's and
    Numba's thread counts and the matmul sharing back as they were. The threading layer, once started, and
    malloc's options stay for the process (neither can be undone)."""
    _set_up_process()
    count = numba.config.NUMBA_NUM_THREADS if threads is None else min(threads, numba.config.NUMBA_NUM_THREADS)
    blas = openblas()  # NumPy's: the one our matmuls run on
    kernel_threads = numba.get_num_threads()
    blas_threads = [(library, library.threads) for library in loaded_openblas()]
    helpers = ThreadPoolExecutor(count - 1) if count > 1 and blas is not None else None
    before = share_matmuls(helpers, count if helpers is not None else 1)
    for library, _ in blas_threads:  # every OpenBLAS: another one's idle threads would spin as well
        library.threads = 1
    # Where BLAS is not an OpenBLAS we can reach (blas.py) it keeps its own threads, and where Numba's threads
    # would spin the matmuls are still cut in parts: in both cases the kernels get one thread (they give the
    # same bits on any number of threads).
    numba.set_num_threads(count if blas is not None and _idle_threads_sleep() else 1)
    try:
        yield
    finally:
        share_matmuls(*before)
        if helpers is not None:
            helpers.shutdown()
        numba.set_num_threads(kernel_threads)
        for library, threads_before in blas_threads:
            library.threads = threads_before


def _set_up_process():
    """What the plan changes once for the process: the quiet layer (before anything starts a layer),
    malloc's options, Numba's BLAS loaded, and helpers of its own for a forked child."""
    global _process_set_up
    if _process_set_up:
        return
    _process_set_up = True
    if _started_layer() is None and "NUMBA_THREADING_LAYER" not in os.environ:
        numba.config.THREADING_LAYER = QUIET_LAYER
    reuse_freed_memory()  # each step allocates the same large arrays: keep their pages
    _load_numbas_blas()
    if hasattr(os, "register_at_fork"):  # POSIX
        os.register_at_fork(after_in_child=_new_helpers_after_fork)


def _load_numbas_blas():
    """Where SciPy is installed, Numba loads SciPy's BLAS (another OpenBLAS) for its linear algebra when it
    first compiles or loads a kernel, which in a training run is inside the plan's block: load it now, so
    that the plan finds it loaded and puts its threads to sleep too."""
    from numba.np.linalg import ensure_blas  # here: its import is slow, and only the plan needs it

    with contextlib.suppress(ImportError):  # no SciPy: Numba has no BLAS of its own to load
        ensure_blas()


def loaded_openblas():
    """Every OpenBLAS loaded in this process, as `OpenBLAS`es: NumPy's, and on Linux every other the
    process's memory map shows (SciPy's wheels ship their own, which Numba loads). Elsewhere NumPy's alone:
    another package's BLAS keeps its own threads."""
    numpy_blas = openblas()
    found = {Path(numpy_blas.path).resolve(): numpy_blas} if numpy_blas is not None else {}
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as maps:
            # address, permissions, offset, device, inode, then the mapped file's path (which may hold spaces)
            paths = {Path(fields[5].rstrip("\n")) for fields in (line.split(maxsplit=5) for line in maps)
                     if len(fields) == 6 and "openblas" in Path(fields[5]).name}
    except OSError:  # not Linux
        paths = set()
    for path in sorted(paths - set(found)):
        library = openblas_at(path)
        if library is not None:
            found[path] = library
    return list(found.values())


def _new_helpers_after_fork():
    """A forked child has none of its parent's threads: inside a plan, give it helpers of its own."""
    parts = matmul_parts()
    if parts > 1:
        share_matmuls(ThreadPoolExecutor(parts - 1), parts)


def _started_layer():
    """The threading layer Numba runs parallel kernels on, or None before the first one (it is fixed then)."""
    try:
        return numba.threading_layer()
    except ValueError:
        return None


def _idle_threads_sleep():
    """Whether Numba's threads sleep between kernels: the workqueue layer, or omp told to be passive."""
    layer = _started_layer() or numba.config.THREADING_LAYER  # before the start: the configured one
    return layer == QUIET_LAYER or (layer == "omp" and os.environ.get("OMP_WAIT_POLICY", "").lower() == "passive")
