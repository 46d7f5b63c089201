"""Which BLAS runs the wide float32 matrix products: the compiled kernels' (core/compiled_updates.py's
updates and bellman/numerics/compiled/residual_kernels.py's SGD and CBO calls, through
compiled_updates._gemm and sgemm_address) and the Q network's passes from Python
(bellman/numerics/compiled/qnet.py, by matmul).

On an Intel CPU MKL's sgemm, which PyTorch's CPU library exports, is faster at these shapes
(1.2-1.5x OpenBLAS's at the agents' layers, 1.1-1.25x at the Q network's three products on one
thread: docs/speed.md). On the AMD machines MKL's products ran below OpenBLAS's, so elsewhere NumPy's
own OpenBLAS runs them, the library NumPy's products and benchmarks/floor.py's prices use. SciPy's
OpenBLAS, a build of its own, left SGD's mini-batch call 6 % slower on the AMD EPYC (docs/speed.md) and
is kept for a NumPy built without the wheel's OpenBLAS. The CPU decides, so the bits of a run are the
platform's, as ever (its provenance names the CPU's vendor)."""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import sys

import numpy as np


@functools.cache
def intel_cpu() -> bool:
    """Whether /proc/cpuinfo names an Intel CPU (False where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            return "GenuineIntel" in cpuinfo.read(4096)
    except OSError:
        return False


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """a @ b of float32 arrays (transposed views are read in place) into out (C-contiguous) or a new
    array: by MKL through torch.mm on an Intel CPU, else by NumPy's OpenBLAS."""
    if not intel_cpu():
        return np.matmul(a, b, out=out)
    import torch

    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
    torch.mm(torch.from_numpy(a), torch.from_numpy(b), out=torch.from_numpy(out))
    return out


# NumPy's wheel carries its OpenBLAS beside it, built with 64-bit integers and its symbols renamed
NUMPY_OPENBLAS, NUMPY_SGEMM = "libscipy_openblas64_*.so", "scipy_sgemm_64_"


def numpy_sgemm_address() -> int | None:
    """The address of the Fortran-interface sgemm of the OpenBLAS NumPy's wheel carries (already loaded
    by NumPy: dlopen hands back the same library), or None where NumPy has no such library."""
    libraries = sorted(glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", NUMPY_OPENBLAS)))
    for path in libraries:
        try:
            return ctypes.cast(getattr(ctypes.CDLL(path), NUMPY_SGEMM), ctypes.c_void_p).value
        except (OSError, AttributeError):
            continue
    return None


def sgemm_address() -> int:
    """The address of a Fortran-interface sgemm: MKL's on an Intel CPU, else NumPy's OpenBLAS, else
    SciPy's. Their integers differ in width (NumPy's 64 bits, the others 32): the caller passes each as
    a 64-bit integer, whose low half a 32-bit interface reads on a little-endian CPU (checked here)."""
    if sys.byteorder != "little":
        raise RuntimeError("the compiled kernels pass BLAS's integers as 64-bit values, which a 32-bit BLAS "
                           "reads right only on a little-endian CPU")
    if intel_cpu():
        try:
            import torch

            library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
            return ctypes.cast(library.sgemm_, ctypes.c_void_p).value
        except (OSError, AttributeError):
            pass
    address = numpy_sgemm_address()
    if address is not None:
        return address
    from scipy.linalg import cython_blas

    get_name, get_pointer = ctypes.pythonapi.PyCapsule_GetName, ctypes.pythonapi.PyCapsule_GetPointer
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    capsule = cython_blas.__pyx_capi__["sgemm"]
    return get_pointer(capsule, get_name(capsule))
