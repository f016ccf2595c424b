"""reuse_freed_memory: after it, a step that allocates the same large arrays again takes no new pages.

Each case runs in a fresh interpreter: malloc's options are global to a process, and the default behaviour
can only be seen in a process that has not set them.
"""

import json
import platform
import subprocess
import sys

import pytest

# Ten 16 MiB arrays allocated, filled and freed, four times, like the activations of four training steps;
# prints the page faults each round took, and whether the options were set.
STEPS = """
import json, resource, sys
import numpy as np
from minibert.fast.allocator import reuse_freed_memory

took = reuse_freed_memory() if sys.argv[1] == "reuse" else None

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

def step():
    before = faults()
    arrays = [np.ones(4 << 20, np.float32) for _ in range(10)]
    del arrays
    return faults() - before

print(json.dumps({"took": took, "faults": [step() for _ in range(4)]}))
"""


def fault_counts(mode):
    out = subprocess.run([sys.executable, "-c", STEPS, mode], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_freed_arrays_are_reused_without_new_page_faults():
    default, reused = fault_counts("default"), fault_counts("reuse")
    assert reused["took"] is True
    first = reused["faults"][0]
    assert first > 1000  # the first round maps fresh pages: 160 MiB
    # Later rounds reuse the first round's pages; by default glibc gives them back and maps them again.
    assert max(reused["faults"][1:]) < first / 20
    assert min(default["faults"][1:]) > first / 2
