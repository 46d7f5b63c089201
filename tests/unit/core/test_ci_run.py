""".ci/run, CI's command: it installs first, runs make test with make verify beside it where a manifest is
published, prints verify's output after the tests', and fails when either fails (verify runs in the
background, where a failure would otherwise pass unseen). Run with a stand-in `make` that records its
calls and exits as told."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FAKE_MAKE = """#!/usr/bin/env bash
echo "$*" >> "$CALLS"
case "$1" in
    test) sleep 0.5; echo "the tests ran"; exit "${TEST_STATUS:-0}" ;;
    verify) echo "verify ran"; exit "${VERIFY_STATUS:-0}" ;;
esac
"""


def ci_run(tmp_path: Path, manifest: bool, test_status: int = 0, verify_status: int = 0):
    project = tmp_path / "project"
    (project / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", project / ".ci" / "run")
    (project / "docs").mkdir()
    if manifest:
        (project / "docs" / "manifest.json").write_text("{}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").write_text(FAKE_MAKE)
    (bin_dir / "make").chmod(0o755)
    calls = tmp_path / "calls"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls), "PYTHON": "python3",
           "TEST_STATUS": str(test_status), "VERIFY_STATUS": str(verify_status), "TMPDIR": str(tmp_path)}
    result = subprocess.run(["bash", str(project / ".ci" / "run")], env=env, capture_output=True, text=True,
                            timeout=60)
    return result, calls.read_text().splitlines()


def test_it_installs_first_then_runs_the_tests_and_the_verify_sample_and_shows_both(tmp_path):
    result, calls = ci_run(tmp_path, manifest=True)
    assert result.returncode == 0, result.stderr
    assert calls[0] == ".venv/.installed PYTHON=python3"
    assert sorted(call.split()[0] for call in calls[1:]) == ["test", "verify"]
    assert "SAMPLE=2" in next(call for call in calls if call.startswith("verify"))
    assert result.stdout.index("the tests ran") < result.stdout.index("verify ran")  # verify's after the tests'
    assert not list(tmp_path.glob("ci-verify.*"))  # its log is removed


@pytest.mark.parametrize("test_status, verify_status", [(1, 0), (0, 2), (1, 2)])
def test_it_fails_when_either_fails(tmp_path, test_status, verify_status):
    result, _ = ci_run(tmp_path, manifest=True, test_status=test_status, verify_status=verify_status)
    assert result.returncode != 0
    assert f"make test exited with {test_status}, make verify with {verify_status}" in result.stderr


def test_without_a_manifest_it_runs_the_tests_alone_and_says_so(tmp_path):
    result, calls = ci_run(tmp_path, manifest=False)
    assert result.returncode == 0, result.stderr
    assert [call.split()[0] for call in calls] == [".venv/.installed", "test"]
    assert "the paper-scale verify sample is skipped" in result.stdout
