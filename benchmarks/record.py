"""What every benchmark that writes into docs/speed.md records beside its numbers: the commit, the
machine, the load, and the block of the page it replaces (so that no timing there is typed)."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "speed.md"


def machine() -> str:
    """The CPU model and its widest SIMD, the core count, and the versions that set the kernels' speed."""
    model, simd = "unknown CPU", "?"
    try:
        info = Path("/proc/cpuinfo").read_text()
        model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")),
                     model)
        simd = "AVX-512" if "avx512f" in info else "AVX2" if "avx2" in info else "no AVX2"
    except OSError:
        pass
    import numpy  # noqa: F401 (loaded, so that its OpenBLAS says which kernels it runs)

    from rlstudy.core.process import openblas_kernels
    from rlstudy.core.provenance import package_versions
    versions = package_versions(("torch", "numpy"))  # the installed ones, without importing PyTorch (seconds)
    return (f"{model} ({simd}), {os.cpu_count()} cores; Python {platform.python_version()}, "
            f"torch {versions['torch']}, numpy {versions['numpy']} (OpenBLAS kernels {openblas_kernels()})")


def commit(where: Path = ROOT) -> str:
    """The short commit of the checkout `where`, marked when it has uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=where, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=where,
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" with uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def load_note(before: float, after: float) -> str:
    """The load average around a measurement, and whether other work shared the cores."""
    shared = "other work shared the cores" if max(before, after) > 0.5 + (os.cpu_count() or 1) else "idle otherwise"
    return f"load average {before:.1f} at the start, {after:.1f} at the end: {shared}"


def markers(name: str, script: str) -> tuple[str, str]:
    return f"<!-- {name}:begin (benchmarks/{script} --write) -->", f"<!-- {name}:end -->"


def block_of(name: str, script: str, doc: Path = DOC) -> str:
    """The current text between a block's markers ('' when empty)."""
    begin, end = markers(name, script)
    text = doc.read_text()
    if text.count(begin) != 1 or text.count(end) != 1:
        raise SystemExit(f"{doc}: expected the markers {begin!r} and {end!r} once each")
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def write_block(name: str, script: str, body: str, doc: Path = DOC) -> None:
    """Replace the block between the markers, atomically (a temporary file, then a rename)."""
    begin, end = markers(name, script)
    block_of(name, script, doc)  # checks the markers
    head, rest = doc.read_text().split(begin, 1)
    tail = rest.split(end, 1)[1]
    temporary = doc.with_suffix(".md.tmp")
    temporary.write_text(f"{head}{begin}\n{body}\n{end}{tail}")
    temporary.replace(doc)
