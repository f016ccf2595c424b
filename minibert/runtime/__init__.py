"""The runtime layer: how the process runs the arrays, not what it computes.

Threads and the process plan (`threads.py`: when a kernel runs in parallel, how the cores are shared, the
opt-out), NumPy's BLAS thread count (`blas.py`), glibc's allocator (`allocator.py`) and the op profiler
(`profile.py`). `threads`, `blas` and `allocator` import only NumPy, Numba and ctypes, so the kernels may
import them (`launch`); `profile` hooks the autograd engine and sits above it. Nothing here changes a
computed number: the tests run a step both ways and compare the bits.
"""

from minibert.runtime.threads import PLAN_VARIABLE, leave_process_alone, plan_is_on, training_threads

__all__ = ["PLAN_VARIABLE", "leave_process_alone", "plan_is_on", "training_threads"]
