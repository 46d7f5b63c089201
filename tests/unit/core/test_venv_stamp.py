"""The install is keyed by content: a venv restored from CI's cache (its files newer or older than the
checkout's, as a cache restore leaves them) is reused while the stamp's key (the hash of pyproject.toml
and the interpreter's sys.version) matches, and reinstalled when either changes; the workflows' cache
keys name Python's full version (the Makefile, .github/workflows/)."""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
INSTALLS = ("pip install", "-m venv")


def install_key(pyproject: bytes, version: str = sys.version) -> str:
    return hashlib.sha256(pyproject + version.encode()).hexdigest()


def restored_checkout(tmp_path: Path, stamp: str) -> Path:
    """A fresh checkout's Makefile and pyproject.toml beside a restored .venv whose stamp holds `stamp`;
    the checkout's files newer than the stamp, as after actions/checkout over a restored cache."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / ".installed").write_text(stamp)
    old = 1_000_000_000
    os.utime(tmp_path / ".venv" / ".installed", (old, old))
    return tmp_path


def dry_run(checkout: Path, target: str = "test-fast") -> str:
    result = subprocess.run(["make", "-n", target, f"PYTHON={sys.executable}"], cwd=checkout, capture_output=True,
                            text=True, check=True)
    return result.stdout


def test_a_restored_venv_whose_key_matches_is_reused(tmp_path):
    key = install_key((ROOT / "pyproject.toml").read_bytes())
    out = dry_run(restored_checkout(tmp_path, f"{key} (sha256 of pyproject.toml and sys.version)\n"))
    assert not any(word in out for word in INSTALLS), out
    assert "pytest" in out


def test_another_pyproject_or_python_reinstalls(tmp_path):
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    for stale in (install_key(pyproject + b"\n# an edit\n"), install_key(pyproject, "3.11.0 (another build)"), ""):
        checkout = restored_checkout(tmp_path / (stale[:8] or "empty"), f"{stale}\n")
        out = dry_run(checkout)
        assert "pip install --quiet -e '.[dev]'" in out and "-m venv --upgrade .venv" in out, out
        assert install_key(pyproject) in out  # the key the install writes into the stamp


def test_the_workflows_cache_the_venv_under_pythons_full_version():
    for path in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        for name, job in yaml.safe_load(path.read_text())["jobs"].items():
            steps = job["steps"]
            python = [step.get("id") for step in steps if str(step.get("uses", "")).startswith("actions/setup-python")]
            venv = [step for step in steps if step.get("with", {}).get("path") == ".venv"]
            for step in venv:
                assert python[0] and f"steps.{python[0]}.outputs.python-version" in step["with"]["key"], (path, name)
