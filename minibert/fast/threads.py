"""How many threads the speed layer's kernels and products run on.

Two rules, both for speed only; the core's kernels know neither and run on Numba's own thread count:
- Small kernels run on one thread (`launch`): below PARALLEL_MIN_ELEMENTS numbers, waking the other threads
  costs more than the work saves. The count is put back after the kernel.
- Inside the process plan (process.py) large matmuls are cut into one part per thread, the parts run at once
  by a pool of helper threads (`share_matmuls`, `run_together`; the products are in fast/kernels/matmul.py).
"""

import numba

PARALLEL_MIN_ELEMENTS = 1 << 16  # below this, waking the other threads costs more than the work saves

_helpers = None  # a concurrent.futures executor for all but one part of a split matmul, or None
_parts = 1  # how many threads share one large matmul (1: BLAS's own threads do)


def launch(kernel, size, *args):
    """kernel(*args) on every Numba thread when it works on `size` >= PARALLEL_MIN_ELEMENTS numbers, else on
    one thread."""
    return kernel(*args) if size >= PARALLEL_MIN_ELEMENTS else on_one_thread(kernel, *args)


def on_one_thread(kernel, *args):
    """kernel(*args) with Numba on one thread (prange loops then run in order, like range), the count put
    back after."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(threads)


def share_matmuls(helpers, parts):
    """From now on, cut each large matmul into `parts` parts, all but one run by `helpers` (an executor);
    `share_matmuls(None, 1)` goes back to one BLAS call per product. Returns the (helpers, parts) before, to
    put back. Called by the process plan only."""
    global _helpers, _parts
    before = (_helpers, _parts)
    _helpers, _parts = helpers, parts
    return before


def matmul_parts():
    """How many threads share one large matmul now: 1 unless the process plan says otherwise."""
    return _parts


def run_together(tasks):
    """Run the callables at the same time, the last on this thread and the others on the helper threads;
    return when all are done."""
    pending = [_helpers.submit(task) for task in tasks[:-1]]
    tasks[-1]()
    for future in pending:
        future.result()
