"""Helpers of the tests that run the workflow: a temporary copy of the project, and its outputs' hashes."""

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from rlstudy.core.sources import IMPORTS_CACHE

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
SHARED = ROOT.parent / "shared" / "data" / "cbo_rl_original"
# The authors' data rides along when the shared copy lies beside the project, as in CI.
AUTHORS = ["--config", f"authors_data={SHARED}"] if SHARED.is_dir() else []
SMOKE = ["--profile", "workflow/profiles/smoke", "--cores", "2", *AUTHORS]
DATASETS = ["ours", "authors"] if AUTHORS else ["ours"]


def snakemake(workdir: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SNAKEMAKE, *args], cwd=workdir, capture_output=True, text=True, env=env)


def copy_project(target: Path) -> Path:
    """The files a workflow run needs, copied into target (created if missing), with Numba's cache of the
    checkout's kernels (`__pycache__/*.nbi, *.nbc`, valid in the copy: Numba checks each source's size and
    mtime, which the copy keeps): a copy's jobs load the kernels that conftest's compiled_kernels compiled
    once in the checkout, instead of compiling them (about a minute of CPU a copy)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "config.yaml", "claims.yaml", "envs.yaml", "protocol.lock", "spent_blocks.yaml"):
        shutil.copy(ROOT / name, target / name)
    (target / "docs" / "publications").mkdir(parents=True, exist_ok=True)
    for publication in (ROOT / "docs" / "publications").glob("*.json"):  # the verdicts carried claims keep
        shutil.copy(publication, target / "docs" / "publications" / publication.name)
    # Not the import scan's cache (core/sources.py): as in a fresh clone, the copy's first Snakemake start writes
    # its own, untracked where a test makes the copy a repository (a tracked one rewritten made the run's commit
    # "+dirty").
    ignore = shutil.ignore_patterns("*.pyc", "*.egg-info", IMPORTS_CACHE.name)
    for name in ("workflow", "src"):
        shutil.copytree(ROOT / name, target / name, ignore=ignore)
    return target


# Measured wall times, and the figure drawn from them: the only outputs that differ between reruns.
MEASURED = ("wall_time.csv", "cost_seconds.")


def is_measured(path: Path) -> bool:
    return any(path.name.startswith(prefix) for prefix in MEASURED)


def digests(workdir: Path) -> dict[str, str]:
    """sha256 of every file under data/, results/ and figures/ but the measured ones, by relative path."""
    return {str(p.relative_to(workdir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in ("data", "results", "figures") for p in sorted((workdir / folder).rglob("*"))
            if p.is_file() and not is_measured(p)}
