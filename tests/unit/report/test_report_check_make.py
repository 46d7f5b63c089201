"""make report-check names what it needs: with no headless Chromium on the PATH it installs one where the platform
allows (apt-get, as root) and otherwise stops with one line saying how (the Makefile)."""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def dry_run(tmp_path: Path, tools: dict[str, str], browsers: str = "no-such-browser") -> subprocess.CompletedProcess:
    """make -n report-check with the given fake tools first on the PATH (name -> what it prints)."""
    shims = tmp_path / "bin"
    shims.mkdir()
    for name, output in tools.items():
        (shims / name).write_text(f"#!/bin/sh\necho {output}\n")
        (shims / name).chmod(0o755)
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / ".venv").mkdir()  # installed: the stamp's key is this interpreter's and pyproject.toml's
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + sys.version.encode()).hexdigest()
    (tmp_path / ".venv" / ".installed").write_text(f"{key}\n")
    return subprocess.run(["make", "-n", "report-check", f"BROWSERS={browsers}", f"PYTHON={sys.executable}"],
                          cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"})


def test_a_browser_on_the_path_is_used(tmp_path):
    result = dry_run(tmp_path, {"fakechromium": "", "id": "1000"}, browsers="fakechromium")
    assert result.returncode == 0 and "apt-get" not in result.stdout and "check_report" in result.stdout


def test_as_root_with_apt_it_installs_chromium(tmp_path):
    result = dry_run(tmp_path, {"id": "0", "apt-get": ""})
    assert result.returncode == 0 and "apt-get install -y -q chromium" in result.stdout


def test_elsewhere_it_stops_saying_how(tmp_path):
    result = dry_run(tmp_path, {"id": "1000"})
    assert result.returncode != 0 and "check_report" not in result.stdout
    assert "make report-check needs a headless Chromium" in result.stderr
    assert "apt-get install -y chromium" in result.stderr
