"""Atomic artefact writes, provenance records, and loads that fail with the file's name.

Every artefact `X` is written to a temporary file in its folder and renamed into place, so a
killed job never leaves a half-written `X`; it gets the user's umask, as a file made by `open`
would. Beside it, `X.provenance.json` records what made it: the resolved parameters, the seed,
the git commit, package versions and the sha256 of each input and of `X`. No timestamps, so the
record is as reproducible as the artefact. `X` is written first, so a record never describes a
file that failed to be written; a loader compares `X` with its record's sha256 when there is
one, so a file changed or cut short since its rule wrote it is named, not used.

A write that fails (read-only folder, no permission, full disk) raises OutputError naming the
path; a read that fails raises InputError naming the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .errors import InputError, OutputError, first_line
from .process import openblas_kernels, thread_counts

if TYPE_CHECKING:
    import torch  # imported where a tensor is read or written: most steps never touch one (start-up time)

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


def package_versions(packages=PACKAGES) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


# The module of the step this process runs, named by core.cli.run (the step's `run(main)`).
_STEP_MODULE: list[str | None] = [None]
# Where a record's command runs: every path it names is relative to the project's root.
COMMAND_FROM = ("the project's root (the folder of the Snakefile), in the project's Python environment "
                "(e.g. after `source .venv/bin/activate`)")


def name_step(module: str | None) -> None:
    _STEP_MODULE[0] = module


def module_of_file(path: str | Path) -> str | None:
    """The dotted name of a module file inside a package (src/rlstudy/bellman/cli/run_method.py ->
    rlstudy.bellman.cli.run_method): the file `python -m` and the warm start put in sys.argv[0]."""
    path = Path(path)
    if path.suffix != ".py" or not path.is_file():
        return None
    parts, folder = [path.stem], path.resolve().parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) if len(parts) > 1 else None


def step_module() -> str | None:
    return _STEP_MODULE[0] or module_of_file(sys.argv[0])


# Set by the workflow for its jobs (the Snakefile's shell prefix): the scale and seed block of the run an
# artefact belongs to, recorded in its provenance (absent for a step run by hand without them).
SCALE_ENV, SEED_BLOCK_ENV = "RLSTUDY_SCALE", "RLSTUDY_SEED_BLOCK"
RUN_ENV = (SCALE_ENV, SEED_BLOCK_ENV)


def run_labels() -> dict[str, str]:
    return {name: os.environ[name] for name in RUN_ENV if name in os.environ}


def rerun_command() -> str:
    """The command that reruns this step, pasted into a shell at the project's root: every argument
    quoted for the shell, src/ on the path (an installed project needs no more), the run's labels set."""
    module = step_module()
    if module is None:  # not a module of a package: the script as it was run
        return shlex.join(sys.argv)
    labels = "".join(f"{name}={shlex.quote(value)} " for name, value in run_labels().items())
    return f"{labels}PYTHONPATH=src " + shlex.join(["python", "-m", module, *sys.argv[1:]])


def provenance(params: dict, seed: int | None, inputs: dict[str, str | Path]) -> dict:
    """The record written beside an artefact (the artefact's own hash is added on write)."""
    return {
        "command": rerun_command(),
        "command_from": COMMAND_FROM,
        "parameters": params,
        "seed": seed,
        "scale": os.environ.get(SCALE_ENV),  # paper or smoke (config `scale`), None by hand
        "seed_block": os.environ.get(SEED_BLOCK_ENV),
        "git_commit": git_commit(),
        "platform": f"{platform.system()} {platform.machine()}",
        "openblas_kernels": openblas_kernels(),  # they decide the rounding of NumPy's products (core/process.py)
        "threads": thread_counts(),  # so does how the products' sums are split between threads
        "packages": package_versions(),
        "inputs": {name: {"path": str(p), "sha256": sha256_file(p)} for name, p in sorted(inputs.items())},
    }


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


def provenance_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + PROVENANCE_SUFFIX)


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


# Every file this process has read through the loaders below: the inputs of a figure's provenance.
_INPUTS_READ: dict[str, Path] = {}


def inputs_read() -> dict[str, Path]:
    return dict(_INPUTS_READ)


# A record lists a few hundred inputs at most (a few hundred KB): a bigger file is not one of ours.
MAX_RECORD_BYTES = 8 << 20
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def read_record(path: str | Path, what: str) -> dict | None:
    """The provenance record of artefact `path`, read with a size limit (a record replaced by, or
    linked to, a huge file fails at once instead of filling the memory); None when there is none."""
    path = Path(path)
    record_path = provenance_path(path)
    if not record_path.is_file():
        return None
    fail = f"unreadable provenance record {record_path} ({what})"
    try:
        with open(record_path, "rb") as f:
            data = f.read(MAX_RECORD_BYTES + 1)
    except OSError as err:
        raise InputError(f"{fail}: {err.strerror or err}; rerun the rule that writes {path}") from err
    if len(data) > MAX_RECORD_BYTES:
        raise InputError(f"{fail}: larger than {MAX_RECORD_BYTES >> 20} MiB, not a provenance record; "
                         f"rerun the rule that writes {path}")
    try:
        record = json.loads(data)
    except (ValueError, RecursionError) as err:
        raise InputError(f"{fail}: not JSON ({first_line(err)}); rerun the rule that writes {path}") from err
    if not isinstance(record, dict):
        raise InputError(f"{fail}: expected a JSON object; rerun the rule that writes {path}")
    return record


def check_against_record(path: Path, what: str) -> None:
    """Compare a file with the sha256 its provenance record gives, when it has one."""
    record = read_record(path, what)
    if record is None:
        return
    artefact = record.get("artefact")
    recorded = artefact.get("sha256") if isinstance(artefact, dict) else None
    if not isinstance(recorded, str) or not SHA256_HEX.fullmatch(recorded):
        raise InputError(f"unreadable provenance record {provenance_path(path)} ({what}): field 'artefact.sha256' "
                         f"is {recorded!r}, not a sha256; rerun the rule that writes {path}")
    try:
        digest = sha256_file(path)
    except OSError as err:
        raise InputError(f"cannot read {path} ({what}): {err.strerror or err}") from err
    if digest != recorded:
        raise InputError(f"{path} ({what}) changed or truncated since it was written (sha256 {digest[:12]}..., "
                         f"its provenance record says {recorded[:12]}...); rerun its rule")


_ABSENT = object()


def check_recorded_run(path: str | Path, what: str, expected: dict) -> None:
    """Refuse `path` unless its provenance record names the run it is read as: each key of
    `expected` (a dotted path into the record, e.g. "parameters.run_seed") holds the given value.
    A run folder copied over another (cp -a seed1 seed0) keeps its record, which names seed 1."""
    record = read_record(path, what)
    if record is None:
        raise InputError(f"{path} ({what}): no provenance record beside it, so nothing says which run it is; "
                         "rerun its rule")
    for key, value in expected.items():
        found = record
        for part in key.split("."):
            found = found.get(part, _ABSENT) if isinstance(found, dict) else _ABSENT
        if found is _ABSENT or found != value or isinstance(found, bool) != isinstance(value, bool):
            shown = "nothing" if found is _ABSENT else repr(found)
            raise InputError(f"{path} ({what}): its provenance record gives {key} {shown}, but it is read as "
                             f"{value!r}; a copied or misplaced run? rerun its rule")


def refuse_repeated_runs(runs: list[tuple[str | Path, dict]]) -> None:
    """Runs read together must be distinct: (path, the keys naming its run) for each."""
    seen = {}
    for path, key in runs:
        frozen = tuple(sorted((k, str(v)) for k, v in key.items()))
        if frozen in seen:
            raise InputError(f"{path} and {seen[frozen]} hold the same run {key}")
        seen[frozen] = path


def _load(path, what: str, read):
    """read(path) for an input that exists and matches its record; a failure names the file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"missing input file {path} ({what}); build it with: snakemake --cores all {path}")
    _INPUTS_READ[str(path)] = path
    check_against_record(path, what)
    try:
        return read(path)
    except Exception as err:  # each reader raises its own types for a damaged file (torch: many)
        if isinstance(err, OSError) and err.errno is not None:  # the system's (permission, I/O), not the content's
            raise InputError(f"cannot read {path} ({what}): {err.strerror}") from err
        raise InputError(f"corrupt input file {path} ({what}): {first_line(err)}; "
                         "delete it and rerun its rule") from err


def load_npy(path, what: str) -> np.ndarray:
    return _load(path, what, lambda p: np.load(p, allow_pickle=False))


def require_finite(tensors: dict[str, torch.Tensor], where: str | Path) -> None:
    """Refuse NaN or inf in any floating tensor of a state dict (a diverged or damaged network)."""
    import torch

    for name, tensor in tensors.items():
        if torch.is_floating_point(tensor) and not torch.isfinite(tensor).all():
            raise InputError(f"{where}: '{name}' holds NaN or inf (a diverged or damaged network); "
                             "rerun the rule that writes it")


def load_tensors(path, what: str) -> dict[str, torch.Tensor]:
    """A dict of tensors (weights_only: no code from the file runs), every floating tensor finite."""
    import torch

    tensors = _load(path, what, lambda p: torch.load(p, weights_only=True))
    if not isinstance(tensors, dict) or not all(isinstance(t, torch.Tensor) for t in tensors.values()):
        raise InputError(f"{path} ({what}): expected a dict of tensors, got {type(tensors).__name__}")
    require_finite(tensors, f"{path} ({what})")
    return tensors


def load_csv(path, what: str, columns=(), finite=()) -> pd.DataFrame:
    """A table with at least one row and the given columns, the `finite` ones free of NaN and inf."""
    frame = _load(path, what, pd.read_csv)
    missing = [c for c in (*columns, *finite) if c not in frame.columns]
    if missing or frame.empty:
        raise InputError(f"{path} ({what}): " + (f"no column {missing}" if missing else "no rows")
                         + "; rerun its rule")
    for column in finite:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(values).all():
            row = int(np.flatnonzero(~np.isfinite(values))[0])
            raise InputError(f"{path} ({what}): column '{column}' is not a finite number in row {row} "
                             f"({frame[column].iloc[row]!r}); a diverged run or a damaged file")
    return frame
