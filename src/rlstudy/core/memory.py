"""Keep freed memory in the process, so that the training loops' large arrays do not page-fault.

A training step allocates arrays of a few MB (an SGD mini-batch's activations: 2e4 rows x 50
float32, 4 MB each) and frees them at its end. By default glibc serves blocks that large with a
fresh mmap and gives them back to the OS on free (and trims the heap once its free top passes a
threshold), so every step touched new pages: the kernel zeroes each 4 KB page on first touch.
On the notebook's CBO step that cost more than the step's arithmetic (benchmarks/floor.py times
the steps as the workflow runs them, with this setting).
Serving them from the heap and never trimming it keeps the pages: the process holds its peak
memory, which a training step needs again at its next iteration anyway. Values are unchanged:
this decides where memory comes from, not what is computed. A step's own set-up (core.cli.setup_torch),
run by hand as under Snakemake: core's, not the launcher's.
"""

from __future__ import annotations

import ctypes
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
_MMAP_THRESHOLD_MAX = 32 << 20  # glibc refuses a larger mmap threshold on 64-bit systems


def keep_freed_memory() -> bool:
    """Blocks up to 32 MB from the heap, and the heap never trimmed (glibc's mallopt); whether it
    applied (False off glibc, e.g. macOS or musl, where nothing changes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # INT_MAX: never trim; the mmap threshold at its largest (each call also stops glibc's own tuning)
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))
