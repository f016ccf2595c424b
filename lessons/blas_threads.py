"""One thread for NumPy's matrix products (BLAS) in the lessons that train models (12-16).

Import it before NumPy: OpenBLAS, the BLAS library inside NumPy, reads OPENBLAS_NUM_THREADS once, when NumPy
loads. The lessons list `import blas_threads` first, and the import sorter keeps it there (b < c < n).

Why one thread: the lessons' models are small (H = 64), so each matrix product is a few microseconds of work,
and two threads spend longer handing it over than computing it; on a machine whose cores other jobs share,
a pass with two BLAS threads took several times as long as with one, and on an idle one one thread still
never lost. The `tiny` run preset makes the same choice for Numba's kernels (`threads=1`).

To try more threads, set the variable yourself: `OPENBLAS_NUM_THREADS=2 python lessons/12_pretrain.py`.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
