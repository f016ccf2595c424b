"""Keep the memory of freed arrays for the next step instead of giving it back to the operating system.

A training step allocates the same large arrays every step (mini's feed-forward activations are
(B, S, 4H) float32, 16 MiB each). glibc's malloc maps each such block afresh and unmaps it when freed, so
every step pays a page fault and a zero-fill per 4 KiB page before any arithmetic. Two mallopt(3) options
stop that: M_MMAP_MAX = 0 (every block comes from the heap, which keeps its pages) and M_TRIM_THRESHOLD at
its largest (free memory at the heap's top stays in the process). The process keeps its peak step memory,
which the next step needs anyway. Only glibc has mallopt; elsewhere this does nothing and returns False.
Legend: B batch, S sequence, H hidden. Figures: docs/performance.md, "Runtime: threads and memory".
"""

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1  # option numbers from glibc's <malloc.h>
# No mmap at all rather than a higher M_MMAP_THRESHOLD: glibc caps that at 32 MiB, and the (8, 4, 512, 512)
# float32 attention arrays of 512-token batches are 32 MiB each, so they would still be mapped every step.
M_MMAP_MAX = -4
TRIM_THRESHOLD_BYTES = 2**31 - 1  # mallopt takes a C int


def reuse_freed_memory():
    """Ask glibc's malloc to keep freed blocks for reuse; True if it took the options."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):  # not glibc: musl, macOS and Windows have no mallopt
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    took_heap_only = mallopt(M_MMAP_MAX, 0)
    took_trim = mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    return bool(took_heap_only and took_trim)
