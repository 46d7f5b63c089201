"""The scale of a checkout on a project copy (dry runs but one small job): the first build records
it, plain snakemake at another scale is refused with the command that keeps it, the README's
`make rerun` commands keep it, and a --configfile beside the smoke profile is refused, not paper."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from project_copy import ROOT, SNAKEMAKE, copy_project, snakemake

# Without the outer make's variables: under `make test` this make would be its sub-make (printing its folder
# first, and taking the outer command line's variables).
ENV_OF = lambda workdir: {**{k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},  # noqa: E731
                          "PYTHONPATH": str(workdir / "src"), "RLSTUDY_WARM_START": "0"}
SHORT = "data/trajectories/ours/evaluation/short/states.npy"
LONG = "data/trajectories/ours/control/long/states.npy"


def planned_steps(output: str) -> set[int]:
    return {int(n) for n in re.findall(r"make_trajectory .*?--steps (\d+)", output)}


def make(workdir: Path, *args: str, snakemake_options: str = "") -> subprocess.CompletedProcess:
    """make as the README shows it, with the venv of this interpreter (no install) and its options added."""
    launcher = f"{shlex.quote(sys.executable)} -m rlstudy.runtime.launch {snakemake_options}"
    return subprocess.run(["make", "-o", ".venv/.installed", f"BIN={Path(sys.executable).parent}",
                           f"SNAKEMAKE={launcher}", *args], cwd=workdir, env=ENV_OF(workdir),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def smoke_checkout(tmp_path_factory):
    """A copy whose first build (one small job) ran at smoke scale."""
    workdir = copy_project(tmp_path_factory.mktemp("scale"))
    shutil.copy(ROOT / "Makefile", workdir / "Makefile")
    built = snakemake(workdir, SHORT, "--profile", "workflow/profiles/smoke", "--cores", "1", env=ENV_OF(workdir))
    assert built.returncode == 0, built.stderr[-3000:]
    assert (workdir / "results" / ".scale").read_text() == "smoke\n"
    return workdir


def test_plain_snakemake_in_a_smoke_checkout_is_refused_with_the_command_that_keeps_it(smoke_checkout):
    result = snakemake(smoke_checkout, "-n", "-p", "-f", LONG, env=ENV_OF(smoke_checkout))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "built at smoke scale (results/.scale)" in output, output[-3000:]
    assert "make rerun TARGET=" in output and "--config rescale=true" in output
    assert 10_000_000 not in planned_steps(output)
    result = snakemake(smoke_checkout, "-n", "-p", "-f", LONG, "--config", "rescale=true", env=ENV_OF(smoke_checkout))
    assert result.returncode == 0 and planned_steps(result.stdout) == {10_000_000}, result.stderr[-3000:]


def test_make_rerun_keeps_the_recorded_scale(smoke_checkout):
    result = make(smoke_checkout, "rerun", f"TARGET={LONG}", "CONFIGFILES=more.yaml", snakemake_options="-n -p")
    assert result.returncode != 0 and "more.yaml" in result.stderr  # no such file yet: Snakemake says so
    (smoke_checkout / "more.yaml").write_text("seed: 7\n")
    for extra in ([], ["CONFIGFILES=more.yaml"]):
        result = make(smoke_checkout, "rerun", f"TARGET={LONG}", *extra, snakemake_options="-n -p")
        assert result.returncode == 0 and planned_steps(result.stdout) == {60_000}, result.stderr[-3000:]
    assert "--seed 7" in result.stdout


def test_a_configfile_beside_the_smoke_profile_is_refused_not_paper(tmp_path):
    workdir = copy_project(tmp_path / "fresh")
    (workdir / "more.yaml").write_text("seed: 7\n")
    result = snakemake(workdir, "-n", "-p", LONG, "--profile", "workflow/profiles/smoke", "--configfile", "more.yaml",
                       env=ENV_OF(workdir))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "--config scale=smoke, but the config files give scale paper" in output, output[-3000:]
    result = snakemake(workdir, "-n", "-p", LONG, "--profile", "workflow/profiles/smoke", "--configfile", "config.yaml",
                       "workflow/profiles/smoke/scale.yaml", "more.yaml", env=ENV_OF(workdir))
    assert result.returncode == 0 and planned_steps(result.stdout) == {60_000}, result.stderr[-3000:]
    assert not (workdir / "results" / ".scale").exists()  # a dry run records nothing


def readme_reruns() -> list[str]:
    block = (ROOT / "README.md").read_text().split("make rerun TARGET=", 1)[1].split("```", 1)[0]
    lines = ("make rerun TARGET=" + block).splitlines()
    return [line.split("  #", 1)[0].strip() for line in lines if line.startswith(("make rerun", "printf"))]


def test_the_readmes_rerun_commands_run_as_shown_at_the_checkouts_scale(smoke_checkout):
    commands = readme_reruns()
    assert len(commands) >= 8 and any("CONFIGFILES" in c for c in commands)
    launcher = f"{shlex.quote(sys.executable)} -m rlstudy.runtime.launch -n"
    for command in commands:
        if command.startswith("printf"):
            subprocess.run(command, shell=True, cwd=smoke_checkout, check=True)
            continue
        if "--sdm conda" in command:
            continue  # needs conda on the machine
        # every make of the line, the one inside $(make -s first-seed) too, with this interpreter's venv
        as_run = command.replace("make ", f"make -o .venv/.installed BIN={Path(sys.executable).parent} "
                                         f"SNAKEMAKE={shlex.quote(launcher)} ")
        result = subprocess.run(as_run, shell=True, cwd=smoke_checkout, env=ENV_OF(smoke_checkout),
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (command, result.stdout[-1500:], result.stderr[-3000:])
        assert "--profile workflow/profiles/smoke" in result.stdout.splitlines()[0], (command, result.stdout[:500])
