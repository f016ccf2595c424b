"""The runtime layer: how the process runs the arrays, not what it computes.

Threads and the process plan (`threads.py`: when a kernel runs in parallel, how the cores are shared, the
opt-out), NumPy's BLAS thread count (`blas.py`), glibc's allocator (`allocator.py`), the op profiler
(`profile.py`) and the machine in one line (`cpu.py`). `threads`, `blas` and `allocator` import only NumPy,
Numba and ctypes, so the kernels may import them (`launch`); `profile` hooks the autograd engine and sits
above it. Nothing here changes what is computed: the kernels give the same bits on any number of threads,
and a step with the plan agrees with one without it to float32 rounding (BLAS's sums depend on how a
product is cut among threads).
"""

from minibert.runtime.threads import PLAN_VARIABLE, leave_process_alone, plan_is_on, training_threads

__all__ = ["PLAN_VARIABLE", "leave_process_alone", "plan_is_on", "training_threads"]
