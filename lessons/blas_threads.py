"""One thread for NumPy's matrix products (BLAS) in the lessons that train models (12-16).

Import it before NumPy: OpenBLAS, the BLAS library inside NumPy, reads OPENBLAS_NUM_THREADS once, when NumPy
loads. The lessons list `import blas_threads` first, and the import sorter keeps it there (b < c < n).

Why one thread: the lessons' models are small (H = 64), so each matrix product is a few microseconds of work,
and two threads spend longer handing it over than computing it. Measured on a 2-core machine shared with
other jobs (2026-11): one `tiny` pretraining pass took 0.035 s with one BLAS thread and 0.12-0.93 s with
two; a `mini` pass (H = 256) 2.2 s against 7.5-11.6 s. On an idle laptop the gap is smaller, but one thread
never lost. The `tiny` run preset makes the same choice for Numba's kernels (`threads=1`).

To try more threads, set the variable yourself: `OPENBLAS_NUM_THREADS=2 python lessons/12_pretrain.py`.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
