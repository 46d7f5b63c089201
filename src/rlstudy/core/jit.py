"""Numba's njit for every compiled kernel of the project, with LLVM told to use the CPU's widest vectors.

On AVX-512 CPUs whose LLVM tuning prefers 256-bit vectors (Intel's Skylake-SP and later) the kernels'
loops otherwise run half as wide: the circle network's cosine measured 1.4x faster at 512 bits. The
kernels have no FMA and no reassociation (fastmath off), so the bits do not depend on the width (a test
compares both). The choice is Numba's process-wide target, read when the process's first kernel
compiles or loads from the cache: so every kernel module asks for its njit here, whichever of them a
process (the warm-start server loads the agents' before the bellman study's) reaches first.
NUMBA_CPU_FEATURES, if set, is left as it is. Numba's cache keys the machine code by the features, so
cached code of either choice is not mixed.
"""

from __future__ import annotations

import functools


@functools.cache
def njit():
    """numba.njit, once the process's target asks for the widest vectors (above)."""
    import numba
    from numba.core import config

    if config.CPU_FEATURES is None:
        import llvmlite.binding as llvm

        features = llvm.get_host_cpu_features().flatten()
        if "+avx512f" in features.split(","):
            config.CPU_FEATURES = features + ",-prefer-256-bit"
    return numba.njit
