"""What a step's process does before its imports and once they are done, and which BLAS kernels it ran.

**The cycle collector while a step imports.** Importing PyTorch makes a few hundred thousand objects
and the collector walks them again and again: about a third of a step's import time, paid by each
of the workflow's hundreds of jobs. When the package runs as `python -m rlstudy...` (every job), the
collector is off while Python locates and imports the step (`sys.argv[0]` is "-m" until the module
is found: Python's documented behaviour for -m) and back on when the step starts (`core.cli.run`),
with the objects made so far frozen out of its reach (`gc.freeze`): they live as long as the process
anyway. A process that imports the package as a library is left alone. Nothing computed changes.

**One thread unless told otherwise.** A step run as `python -m rlstudy...` with OMP_NUM_THREADS unset
sets it to 1 before NumPy or PyTorch load (OpenBLAS, MKL and PyTorch's intra-op pool read it then):
the count Snakemake gives every job (`threads: 1`). Otherwise a step rerun by hand from its
provenance's `command` ran on every core: on this 2-core machine an SGD run took 7 times as long
(two threads per tiny product, fighting over the cores) and ended on other bits, since the
products' sums split by thread. A variable set by the user, or by Snakemake for a rule given more
threads, is kept; the provenance records the counts the step ran with (`threads`).

**OpenBLAS's kernels.** NumPy's OpenBLAS picks its kernels when it loads (from the CPU, or from
OPENBLAS_CORETYPE where that is set), and the kernels decide the rounding of NumPy's matrix products,
so the same config gives the same bits only under the same kernels. Every artefact's provenance
records them (`openblas_kernels`). The project leaves the choice to OpenBLAS and the environment.

It lives in core, not with the launcher (runtime/): every step's process runs it, by hand or under
Snakemake, warm or cold (core.cli.run, and rlstudy/__init__.py), its thread default decides bits, and
core.loaders records what it reads; the warm-start server calls imports_done() as a step would.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

STEP_THREADS = "1"  # OMP_NUM_THREADS of a step run with it unset: the workflow's `threads: 1`


def before_imports() -> None:
    """Called by rlstudy/__init__.py, before the step's own imports."""
    if sys.argv[:1] == ["-m"]:
        gc.disable()
        os.environ.setdefault("OMP_NUM_THREADS", STEP_THREADS)


def imports_done() -> None:
    """Called by core.cli.run as the step starts: the collector back on, if before_imports turned it off."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _openblas_function(names: tuple[str, ...]):
    """The first of these functions that NumPy's OpenBLAS exports (its symbols carry a prefix and a
    suffix that depend on the build), or None."""
    import ctypes

    import numpy as np

    for library in sorted(Path(np.__file__).parent.parent.glob("numpy.libs/*openblas*")):
        try:
            handle = ctypes.CDLL(str(library))
        except OSError:
            continue
        for name in names:
            function = getattr(handle, name, None)
            if function is not None:
                return function
    return None


def _openblas_names(name: str) -> tuple[str, ...]:
    return (f"scipy_openblas_{name}64_", f"scipy_openblas_{name}", f"openblas_{name}")


def openblas_kernels() -> str:
    """The kernels of the OpenBLAS that NumPy loaded in this process (e.g. "Haswell", "SkylakeX"):
    "numpy not loaded" before NumPy is, "unknown" where NumPy's BLAS is not a known OpenBLAS build."""
    if "numpy" not in sys.modules:
        return "numpy not loaded"
    import ctypes

    corename = _openblas_function(_openblas_names("get_corename"))
    if corename is None:
        return "unknown"
    corename.restype = ctypes.c_char_p
    return corename().decode()


def thread_counts() -> dict[str, int | str]:
    """The threads this process's products may use: NumPy's OpenBLAS and PyTorch's intra-op pool
    ("not loaded" for NumPy in a step that never imported it, "unknown" for a BLAS that does not say).
    For PyTorch, where a step never imported it, the count it would take from OMP_NUM_THREADS ("default"
    if unset): the same record whether the step ran in a new interpreter or in a fork of one that had
    imported PyTorch already (runtime/warmstart/)."""
    counts: dict[str, int | str] = {"numpy": "not loaded", "torch": os.environ.get("OMP_NUM_THREADS", "default")}
    if "numpy" in sys.modules:
        get_threads = _openblas_function(_openblas_names("get_num_threads"))
        counts["numpy"] = int(get_threads()) if get_threads is not None else "unknown"
    if "torch" in sys.modules:
        counts["torch"] = sys.modules["torch"].get_num_threads()
    elif counts["torch"].isdigit():
        counts["torch"] = int(counts["torch"])
    return counts
