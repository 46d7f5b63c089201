"""Atomic artefact writes, provenance records, and loads that fail with the file's name.

Every artefact `X` is written to a temporary file in its folder and renamed into place, so a
killed job never leaves a half-written `X`. Beside it, `X.provenance.json` records what made
it: the resolved parameters, the seed, the git commit, package versions and the sha256 of each
input. No timestamps, so the record is as reproducible as the artefact.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .errors import InputError

PACKAGES = ("torch", "numpy", "pandas", "matplotlib", "seaborn", "snakemake")
PROVENANCE_SUFFIX = ".provenance.json"


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def git_commit() -> str:
    """The commit of the checkout holding this package, with '+dirty' for uncommitted changes."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return commit + ("+dirty" if dirty else "")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def provenance(params: dict, seed: int | None, inputs: dict[str, str | Path]) -> dict:
    """The record written beside an artefact (the artefact's own hash is added on write)."""
    return {
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "parameters": params,
        "seed": seed,
        "git_commit": git_commit(),
        "platform": f"{platform.system()} {platform.machine()}",
        "packages": package_versions(),
        "inputs": {name: {"path": str(p), "sha256": sha256_file(p)} for name, p in sorted(inputs.items())},
    }


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_artefact(path: str | Path, data: bytes, record: dict | None) -> None:
    """Write bytes atomically, then the provenance record (with the artefact's sha256) beside it."""
    path = Path(path)
    if record is not None:
        record = {**record, "artefact": {"path": path.name, "sha256": hashlib.sha256(data).hexdigest()}}
        text = json.dumps(record, indent=2, sort_keys=True, default=str) + "\n"
        _atomic_write_bytes(path.with_name(path.name + PROVENANCE_SUFFIX), text.encode())
    _atomic_write_bytes(path, data)


def save_npy(path, array: np.ndarray, record: dict | None) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    write_artefact(path, buffer.getvalue(), record)


def save_tensors(path, tensors: dict[str, torch.Tensor], record: dict | None) -> None:
    """torch.save through a buffer: saving to a path names the archive after the file, which
    would make the bytes depend on the (temporary) file name."""
    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, buffer)
    write_artefact(path, buffer.getvalue(), record)


def save_csv(path, frame: pd.DataFrame, record: dict | None) -> None:
    write_artefact(path, frame.to_csv(index=False, float_format="%.9g", lineterminator="\n").encode(), record)


# Every file this process has read through the loaders below: the inputs of a figure's provenance.
_INPUTS_READ: dict[str, Path] = {}


def inputs_read() -> dict[str, Path]:
    return dict(_INPUTS_READ)


def _require(path: Path, what: str) -> None:
    if not path.is_file():
        raise InputError(f"missing input file {path} ({what}); build it with: snakemake --cores all {path}")
    _INPUTS_READ[str(path)] = path


def load_npy(path, what: str) -> np.ndarray:
    path = Path(path)
    _require(path, what)
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        raise InputError(f"corrupt input file {path} ({what}): {err}; delete it and rerun its rule") from err


def load_tensors(path, what: str) -> dict[str, torch.Tensor]:
    path = Path(path)
    _require(path, what)
    try:
        return torch.load(path, weights_only=True)
    except Exception as err:  # torch raises many types for a damaged archive
        raise InputError(f"corrupt input file {path} ({what}): {err}; delete it and rerun its rule") from err


def load_csv(path, what: str) -> pd.DataFrame:
    path = Path(path)
    _require(path, what)
    try:
        return pd.read_csv(path)
    except (ValueError, OSError) as err:
        raise InputError(f"corrupt input file {path} ({what}): {err}") from err
