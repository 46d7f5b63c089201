"""The project's launcher (python -m rlstudy.runtime.launch) run as a user runs it, and a YAML
template that writes a marker file if anything evaluates it: shared by the launcher's unit tests
(tests/unit/core/test_config_safety.py) and those that run Snakemake (tests/workflow/test_launcher_workflow.py)."""

import os
import subprocess
import sys
from pathlib import Path

from hostile import ROOT

PYTHON = sys.executable
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def env_of(workdir: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(workdir / "src")}


def yte_payload(marker: Path, key: str = "seed") -> str:
    return f'__use_yte__: true\n{key}: ?__import__("pathlib").Path({str(marker)!r}).write_text("ran") and 7\n'


def launch(*args, cwd=ROOT, env=ENV) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "rlstudy.runtime.launch", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def one_line_refusal(result, *fragments):
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = [line for line in result.stderr.splitlines() if line.startswith("rlstudy.runtime.launch:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def alias_bomb(levels: int) -> str:
    """`--config xx=[...]`: ten aliases of the level below at each level, 10**levels strings in all."""
    names = "abcdefghij"
    parts = ["&a [0,0,0,0,0,0,0,0,0,0]"] + [
        f"&{names[i]} [" + ",".join([f"*{names[i - 1]}"] * 10) + "]" for i in range(1, levels)]
    return "xx=[" + ",".join(parts) + "]"
