"""What a step's process does before its imports and once they are done, and which BLAS kernels it ran.

**The cycle collector while a step imports.** Importing PyTorch makes a few hundred thousand objects
and the collector walks them again and again: about a third of a step's import time, paid by each
of the workflow's hundreds of jobs. When the package runs as `python -m rlstudy...` (every job), the
collector is off while Python locates and imports the step (`sys.argv[0]` is "-m" until the module
is found: Python's documented behaviour for -m) and back on when the step starts (`core.cli.run`),
with the objects made so far frozen out of its reach (`gc.freeze`): they live as long as the process
anyway. A process that imports the package as a library is left alone. Nothing computed changes.

**OpenBLAS's kernels.** NumPy's OpenBLAS picks its kernels when it loads (from the CPU, or from
OPENBLAS_CORETYPE where that is set), and the kernels decide the rounding of NumPy's matrix products,
so the same config gives the same bits only under the same kernels. Every artefact's provenance
records them (`openblas_kernels`). The project leaves the choice to OpenBLAS and the environment.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path


def before_imports() -> None:
    """Called by rlstudy/__init__.py, before the step's own imports."""
    if sys.argv[:1] == ["-m"]:
        gc.disable()


def imports_done() -> None:
    """Called by core.cli.run as the step starts: the collector back on, if before_imports turned it off."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def openblas_kernels() -> str:
    """The kernels of the OpenBLAS that NumPy loaded in this process (e.g. "Haswell", "SkylakeX"):
    "numpy not loaded" before NumPy is, "unknown" where NumPy's BLAS is not a known OpenBLAS build."""
    if "numpy" not in sys.modules:
        return "numpy not loaded"
    import ctypes

    import numpy as np

    for library in sorted(Path(np.__file__).parent.parent.glob("numpy.libs/*openblas*")):
        try:
            handle = ctypes.CDLL(str(library))
        except OSError:
            continue
        for symbol in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename"):
            corename = getattr(handle, symbol, None)
            if corename is not None:
                corename.restype = ctypes.c_char_p
                return corename().decode()
    return "unknown"
