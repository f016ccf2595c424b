"""Keep the memory of freed arrays for the next step instead of giving it back to the operating system.

A training step allocates the same large arrays every time: the feed-forward activations of `mini` at batch 32
and 128 tokens are (32, 128, 1024) float32, 16 MiB each, several per layer. By default glibc's malloc serves a
request that large with a fresh `mmap` and hands it back with `munmap` when NumPy frees it. The next step's
array is then new memory again, and the kernel pays a page fault and a zero-fill for each of its 4 KiB pages
(4,096 of them for 16 MiB) before the arithmetic can touch it: work that has nothing to do with BERT, paid on
every step. (glibc raises its threshold by itself after freeing such a block, but only up to that block's size,
and it still returns the free top of the heap to the system past 128 KiB.)

`reuse_freed_memory()` sets two options of glibc's malloc (mallopt(3)):
- M_MMAP_MAX = 0: no block gets an mmap of its own; all come from the heap, which keeps its pages;
- M_TRIM_THRESHOLD = 2 GiB (the largest int): free memory at the top of the heap stays in the process for
  the next step instead of being given back.
(Raising M_MMAP_THRESHOLD instead stops at glibc's cap of 32 MiB, and setting any option turns off glibc's
own adjustment, so the (8, 4, 512, 512) attention arrays of 512-token batches, 32 MiB each, were mapped
afresh on every step: 0.76 s a step against 0.70 s this way.)

The process keeps the step's peak memory between steps, which it needs again at the next step anyway. The
options hold for the rest of the process: a notebook that ran `fine_tune` keeps them afterwards.
Measured on `mini` (bench/compare_torch.py --only scaling, one run each way, 2 cores): batch 32 of 128
tokens 0.534 s a step by default, 0.453 s with the options set; batch 64, 1.358 s and 0.914 s.
tests/test_allocator.py counts the page faults that go away.

Only glibc (Linux) has mallopt; on other systems this does nothing and says so by returning False.
"""

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1  # option numbers from glibc's <malloc.h>
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
