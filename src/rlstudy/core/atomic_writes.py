"""Atomic artefact writes: every artefact `X` is written to a temporary file in its folder and renamed
into place, so a killed job never leaves a half-written `X`; it gets the user's umask, as a file made
by `open` would. `X` is written first, then its provenance record (core/provenance.py), so a record
never describes a file that failed to be written. A write that fails (read-only folder, no
permission, full disk) raises OutputError naming the path."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .errors import OutputError
from .provenance import provenance_path

if TYPE_CHECKING:  # their callers import them: the Snakefile's checks write no table (pandas) and no tensor
    import pandas as pd
    import torch  # most steps never touch a tensor (start-up time)


def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it (/proc/self/status);
    elsewhere set and put back at once, as os.umask is the only portable way to read it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _temporary_beside(path: Path, data: bytes) -> str:
    """A new temporary file in path's folder holding `data`, to be renamed onto `path`; removed again
    when writing it fails (the OSError goes on to the caller, which names `path`)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # mkstemp creates 0600; an artefact gets the permissions open() would give it, so that a
        # group sharing a cluster folder can read it.
        os.chmod(tmp, 0o666 & ~_umask())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temporary_beside(path, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as err:
        raise OutputError(f"cannot write {path}: {err.strerror or err}") from err


def write_artefact(path: str | Path, data: bytes, record: dict | None) -> None:
    """Write bytes atomically, then the provenance record (with the artefact's sha256) beside it.

    The artefact first: a failed write leaves the old artefact and its old record, which agree.
    When the record then fails, the old one (which describes the old bytes) is removed."""
    path = Path(path)
    _atomic_write_bytes(path, data)
    if record is None:  # a record beside it would describe other bytes
        provenance_path(path).unlink(missing_ok=True)
    else:
        record = {**record, "artefact": {"path": path.name, "sha256": hashlib.sha256(data).hexdigest()}}
        text = json.dumps(record, indent=2, sort_keys=True, default=str) + "\n"
        record_path = provenance_path(path)
        try:
            _atomic_write_bytes(record_path, text.encode())
        except OutputError:
            record_path.unlink(missing_ok=True)
            raise


def replace_all(contents: dict[str | Path, bytes]) -> None:
    """Write several files all or none (pages that must agree: the README's verdicts and the claims
    page's evidence). Each is written to a temporary file beside it first, which proves every folder
    writable before any file changes; then each is renamed into place. A rename that fails midway
    puts back the files already replaced, from their bytes read before (a file that did not exist
    is removed), so that none changes. A failure raises OutputError naming the file."""
    targets = {Path(path): data for path, data in contents.items()}
    originals: dict[Path, bytes | None] = {}
    for path in targets:
        if path.is_dir():
            raise OutputError(f"cannot write {path}: it is a folder")
        try:
            originals[path] = path.read_bytes() if path.exists() else None
        except OSError as err:
            raise OutputError(f"cannot write {path}: cannot read what it holds now ({err.strerror or err})") from err
    temporaries: dict[Path, str] = {}
    try:
        for path, data in targets.items():
            try:
                temporaries[path] = _temporary_beside(path, data)
            except OSError as err:
                raise OutputError(f"cannot write {path}: {err.strerror or err}; no file was changed") from err
        replaced: list[Path] = []
        for path, tmp in temporaries.items():
            try:
                os.replace(tmp, path)
            except OSError as err:
                unrestored = _put_back(replaced, originals)
                raise OutputError(f"cannot write {path}: {err.strerror or err}; " + (
                    f"and could not put back {', '.join(map(str, unrestored))}" if unrestored
                    else "no file was changed")) from err
            replaced.append(path)
    finally:
        for tmp in temporaries.values():
            Path(tmp).unlink(missing_ok=True)


def _put_back(paths: list[Path], originals: dict[Path, bytes | None]) -> list[Path]:
    """Restore files replaced by replace_all from the bytes they held; those that could not be."""
    failed = []
    for path in paths:
        try:
            if originals[path] is None:
                path.unlink(missing_ok=True)
            else:
                _atomic_write_bytes(path, originals[path])
        except (OSError, OutputError):
            failed.append(path)
    return failed


def ensure_writable(folder: str | Path) -> None:
    """Create folder if needed and prove a file can be written in it, before long work starts
    (a read-only or foreign folder then fails in a second, not after hours of training)."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder) as probe:
            probe.write(b"probe")
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as err:
        raise OutputError(f"cannot write in {folder}: {err.strerror or err}") from err


def ensure_writable_paths(*paths: str | Path) -> None:
    """Probe where each output goes before any is written, so that a step writing two files does not
    write the first and then fail on the second (a folder given as a file, a read-only folder)."""
    for path in map(Path, paths):
        if path.is_dir():
            raise OutputError(f"cannot write {path}: it is a folder")
        ensure_writable(path.parent)


def save_npy(path, array: np.ndarray, record: dict | None) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    write_artefact(path, buffer.getvalue(), record)


def save_tensors(path, tensors: dict[str, torch.Tensor], record: dict | None) -> None:
    """torch.save through a buffer: saving to a path names the archive after the file, which
    would make the bytes depend on the (temporary) file name."""
    import torch

    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, buffer)
    write_artefact(path, buffer.getvalue(), record)


def save_csv(path, frame: pd.DataFrame, record: dict | None) -> None:
    write_artefact(path, frame.to_csv(index=False, float_format="%.9g", lineterminator="\n").encode(), record)
