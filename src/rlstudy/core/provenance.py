"""Provenance records: what made an artefact, written beside it as `X.provenance.json` (the resolved
parameters, the seed, the command that reruns the step, the git commit, package versions and the
sha256 of each input and of `X`; no timestamps, so the record is as reproducible as the artefact),
and read back with limits: a loader compares `X` with its record's sha256 when there is one, so a file
changed or cut short since its rule wrote it is named, not used; a run read as another is refused."""

from __future__ import annotations

import functools
import json
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .digests import SHA256_HEX, sha256_file
from .errors import InputError
from .process import openblas_kernels, thread_counts
from .regular_files import MAX_RECORD_BYTES, read_json, shown


PACKAGES = ("torch", "numpy", "pandas", "matplotlib", "seaborn", "snakemake")


PROVENANCE_SUFFIX = ".provenance.json"


# The checkout and the package versions are looked up once per process (a few tens of milliseconds with
# the two git commands), and the warm-start server looks them up before it forks any job: a job records
# the checkout and the libraries its process loaded its code from.
@functools.cache
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
    return dict(_package_versions(tuple(packages)))


@functools.cache
def _package_versions(packages: tuple[str, ...]) -> dict[str, str]:
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


def provenance_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + PROVENANCE_SUFFIX)


# A record lists a few hundred inputs at most (a few hundred KB): a bigger file is not one of ours.


def read_record(path: str | Path, what: str) -> dict | None:
    """The provenance record of artefact `path`, opened as a regular file of at most MAX_RECORD_BYTES (a
    record replaced by a FIFO, a device or a huge file fails at once instead of hanging or filling the
    memory); None when there is no file of that name."""
    path = Path(path)
    record_path = provenance_path(path)
    if not os.path.lexists(record_path):
        return None
    fail = f"unreadable provenance record {shown(record_path)} ({what})"
    try:
        record = read_json(record_path, MAX_RECORD_BYTES, "a provenance record")
    except InputError as err:
        raise InputError(f"{fail}: {err}; rerun the rule that writes {shown(path)}") from err
    if not isinstance(record, dict):
        raise InputError(f"{fail}: expected a JSON object; rerun the rule that writes {shown(path)}")
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
