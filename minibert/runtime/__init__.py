"""The runtime layer: how the process runs the arrays, not what it computes.

Threads (`threads.py`: when a kernel runs in parallel, how training shares the cores), NumPy's BLAS thread
count (`blas.py`), glibc's allocator (`allocator.py`) and the op profiler (`profile.py`). `threads`, `blas`
and `allocator` import only NumPy, Numba and ctypes, so the kernels may import them (`launch`); `profile`
hooks the autograd engine and sits above it. Nothing here changes a computed number.
"""
