"""core/memory.py: freed blocks of a few MB stay in the process, so a loop that allocates and frees
them each iteration stops page-faulting (the kernel zeroing fresh pages) after its first."""

import subprocess
import sys

import pytest

PROBE = """
import resource, sys
import numpy as np
from rlstudy.core.memory import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
def step():  # an SGD step: five 4 MB activations alive together, written, then freed
    return sum(a.sum() for a in [np.ones(1 << 20, np.float32) for _ in range(5)])
step()  # the first step's pages are new either way
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def page_faults(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_freed_blocks_are_reused_without_new_page_faults():
    # fresh pages every step would be 20 x 5 x 1024 faults (glibc's default gave about that here)
    kept = page_faults("keep")
    assert kept < 256, kept


def test_it_says_whether_it_applied():
    from rlstudy.core.memory import keep_freed_memory

    assert keep_freed_memory() is sys.platform.startswith("linux")  # CI and the workflow run on glibc
