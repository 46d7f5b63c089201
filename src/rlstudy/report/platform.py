"""The platform that rounds a run's numbers, as the libraries report what they run: the CPU's vendor and
the instruction sets that decide which kernels run, the kernels OpenBLAS picked (`openblas_get_corename`,
through ctypes), PyTorch's CPU capability (`torch.backends.cpu.get_cpu_capability()`), NumPy's BLAS
(`np.show_config`), the library versions. The BLAS environment variables are recorded too, but only as
what was asked for: two platforms are the same or not by what ran (MEASURED_KEYS), so a variable that
names the kernel a machine picks anyway changes nothing, and an edit on the same CPU stays a defect.

Where two platforms differ only in their kernels, this machine can often run the other's: OpenBLAS takes
OPENBLAS_CORETYPE and PyTorch ATEN_CPU_CAPABILITY (`emulation_environment`), and verify rebuilds
under them to tell a kernel's rounding from a defect. Not where the CPU lacks their instructions: OpenBLAS
runs the kernels it is told to, and its AVX-512 ones die of an illegal instruction on an AVX2 CPU, so a
child process's products are tried under them first (`cannot_emulate`).
"""

from __future__ import annotations

import os
import platform
import re
import signal
import subprocess
import sys
from pathlib import Path

from rlstudy.core.errors import InputError
from rlstudy.core.provenance import package_versions

# The instruction sets whose presence decides the kernels OpenBLAS, MKL and PyTorch pick.
BLAS_FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
              "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8")
# Thread counts aside: Snakemake sets them per job (each record has its own), not the machine.
BLAS_ENVIRONMENT = ("OPENBLAS_CORETYPE", "MKL_CBWR",
                    "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE", "ATEN_CPU_CAPABILITY")
LIBRARIES = ("torch", "numpy", "scipy", "pandas", "matplotlib", "seaborn", "gymnasium", "ale-py", "numba",
             "llvmlite", "pillow", "opencv-python-headless", "snakemake")
# What the libraries report they run: the keys of `rounding` that tell one platform from another. The
# CPU's model name (the flags and vendor decide the kernels) and the environment (what was asked for,
# not what ran) are recorded for the reader only.
MEASURED_KEYS = ("machine", "cpu_vendor", "blas_flags", "numpy_blas", "openblas_kernels", "torch_cpu_capability",
                 "torch_mkl", "versions")
KERNEL_KEYS = ("openblas_kernels", "torch_cpu_capability")
# A kernel's name as OpenBLAS and PyTorch report them (Haswell, SkylakeX, AVX512, DEFAULT): a word.
KERNEL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")


def _cpu() -> dict[str, object]:
    model = vendor = platform.processor() or "unknown"
    flags: set[str] = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key == "model name":
                model = value
            elif key == "vendor_id":
                vendor = value
            elif key == "flags":
                flags = set(value.split())
    except OSError:
        pass
    return {"model": model, "vendor": vendor, "blas_flags": [f for f in BLAS_FLAGS if f in flags],
            "cores": os.cpu_count()}


def platform_record() -> dict[str, object]:
    """What decides the rounding of this machine's products, as this process sees it; the `rounding`
    part's MEASURED_KEYS are what verify compares to tell the same platform from another."""
    import numpy as np
    import torch

    from rlstudy.core.process import openblas_kernels

    numpy_config = np.show_config(mode="dicts") or {}
    numpy_blas = numpy_config.get("Build Dependencies", {}).get("blas", {})
    versions = package_versions(LIBRARIES)
    cpu = _cpu()
    rounding = {
        "machine": f"{platform.system()} {platform.machine()}",
        "cpu_vendor": cpu["vendor"],
        "cpu_model": cpu["model"],
        "blas_flags": cpu["blas_flags"],
        "numpy_blas": f"{numpy_blas.get('name', 'unknown')} {numpy_blas.get('version', '')}".strip(),
        "openblas_kernels": openblas_kernels(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_mkl": bool(torch.backends.mkl.is_available()),
        "environment": {name: os.environ[name] for name in BLAS_ENVIRONMENT if name in os.environ},
        "versions": versions,
    }
    return {"rounding": rounding, "cores": cpu["cores"], "torch_config": torch.__config__.show().splitlines()}


def differing_platform(published: dict, here: dict) -> list[str]:
    """The measured keys of the rounding platform that differ between the manifest's and this machine's."""
    return [key for key in MEASURED_KEYS if published.get(key) != here.get(key)]


def differing_kernels(published: dict, here: dict) -> list[str]:
    return [key for key in KERNEL_KEYS if published.get(key) != here.get(key)]


def emulation_environment(published: dict) -> dict[str, str]:
    """The environment under which this machine's OpenBLAS and PyTorch run the published platform's
    kernels (the names checked as words: they come from a file)."""
    kernels, capability = published.get("openblas_kernels"), published.get("torch_cpu_capability")
    for key, name in (("openblas_kernels", kernels), ("torch_cpu_capability", capability)):
        if not isinstance(name, str) or not KERNEL_NAME.fullmatch(name):
            raise InputError(f"the manifest's platform.rounding.{key} {str(name)[:40]!r} is not a kernel's name")
    return {"OPENBLAS_CORETYPE": kernels, "ATEN_CPU_CAPABILITY": capability.lower()}


# A child process's products under the emulation environment: OpenBLAS's single and double precision
# products and PyTorch's (the kernels the rebuilt artefacts run).
EMULATION_PROBE = ("import numpy as np, torch\n"
                   "a = np.ones((64, 64)); a @ a; a.astype(np.float32) @ a.astype(np.float32)\n"
                   "t = torch.ones(64, 64); t @ t; torch.tanh(t)\n")


# The probe takes a few seconds (importing PyTorch); one that has not ended by then never will.
EMULATION_TIMEOUT_S = 300


def cannot_emulate(environment: dict[str, str]) -> str | None:
    """Why this machine cannot run the kernels `environment` names (a child process's products under it
    failed: killed by an illegal instruction where the CPU lacks the kernels' instructions), or None."""
    try:
        done = subprocess.run([sys.executable, "-c", EMULATION_PROBE], env={**os.environ, **environment},
                              capture_output=True, text=True, timeout=EMULATION_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"a matrix product under them had not ended after {EMULATION_TIMEOUT_S} s"
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        try:
            how = f"killed by {signal.Signals(-done.returncode).name}"
        except ValueError:
            how = f"killed by signal {-done.returncode}"
    else:
        how = f"exit status {done.returncode}"
    return f"a matrix product under them failed ({how})"
