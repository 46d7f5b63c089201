"""Which BLAS sgemm the compiled updates (core/compiled_updates.py) call for their wide products."""

from __future__ import annotations

import ctypes
import os


def sgemm_address() -> int:
    """The address of a Fortran-interface sgemm: on an Intel CPU MKL's, which PyTorch's CPU library
    exports (1.2-1.5x OpenBLAS's at these shapes there), else SciPy's OpenBLAS (on the AMD machines
    MKL's products ran below OpenBLAS's: docs/speed.md). The CPU decides, so the bits of a run are
    the platform's, as ever."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            intel = "GenuineIntel" in cpuinfo.read(4096)
        if intel:
            import torch

            library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
            return ctypes.cast(library.sgemm_, ctypes.c_void_p).value
    except (OSError, AttributeError):
        pass
    from scipy.linalg import cython_blas

    get_name, get_pointer = ctypes.pythonapi.PyCapsule_GetName, ctypes.pythonapi.PyCapsule_GetPointer
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    capsule = cython_blas.__pyx_capi__["sgemm"]
    return get_pointer(capsule, get_name(capsule))
