"""The launcher and the Snakefile as Snakemake runs them (dry runs, each a Snakemake process that reads
the workflow, seconds each): the launcher runs Snakemake as the snakemake command does, plain Snakemake
runs a YAML template but the Snakefile fails the run, both refuse `--config` aliases within seconds,
and `--config tensorboard=true` plans or names its extra. The launcher's own refusals, before any
Snakemake runs, are unit tests (tests/unit/core/test_config_safety.py)."""

import importlib.util
import subprocess
import time

from hostile import ROOT
from launcher import ENV, SNAKEMAKE, alias_bomb, env_of, launch, one_line_refusal, yte_payload
from project_copy import copy_project


def test_plain_snakemake_runs_a_yte_file_but_the_snakefile_fails_the_run(tmp_path):
    """What the launcher guards against: Snakemake 9 evaluates the template before the Snakefile
    starts (no switch turns it off); the Snakefile's check makes the run fail instead of exit 0."""
    marker = tmp_path / "PWN"
    (tmp_path / "more.yaml").write_text(yte_payload(marker))
    result = subprocess.run([SNAKEMAKE, "-n", "--cores", "1", "--configfile", str(tmp_path / "more.yaml")],
                            cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert marker.exists()  # if this fails, Snakemake stopped running templates: say so in docs/reliability.md
    output = result.stdout + result.stderr  # Snakemake prints a Snakefile's error to stdout
    assert result.returncode != 0 and "more.yaml sets __use_yte__" in output, output[-2000:]


def test_the_launcher_runs_snakemake_as_the_snakemake_command_does(tmp_path):
    workdir = copy_project(tmp_path / "project")  # not this checkout: its recorded scale may be paper
    result = launch("-n", "--profile", "workflow/profiles/smoke", "fourier_error", cwd=workdir, env=env_of(workdir))
    assert result.returncode == 0, result.stderr[-2000:]
    assert launch("--version").stdout.strip() == subprocess.run(
        [SNAKEMAKE, "--version"], capture_output=True, text=True).stdout.strip()


def refusal_seconds(config: str) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run([SNAKEMAKE, "-n", "--cores", "1", "--config", config], cwd=ROOT, env=ENV,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    return time.perf_counter() - start, result.stdout + result.stderr


def test_the_snakefile_and_the_launcher_refuse_config_aliases_within_seconds():
    """Within seconds: as fast as Snakemake refuses an unknown key (the same start and Snakefile; a bomb
    expanded would take minutes), with room for a loaded machine, where both take longer."""
    plain, _ = refusal_seconds("no_such_key=1")
    bomb, output = refusal_seconds(alias_bomb(6))
    assert "YAML aliases (*name) are not allowed" in output, output[-2000:]
    assert bomb < 2 * plain + 3.0, (bomb, plain)
    one_line_refusal(launch("-n", "--cores", "1", "--config", alias_bomb(6)), "YAML aliases")


def test_tensorboard_true_on_the_command_line_plans_or_names_the_missing_extra(tmp_path):
    """The documented `--config tensorboard=true`, end to end (a dry run): before any job."""
    workdir = copy_project(tmp_path / "project")
    result = launch("fourier_error", "-n", "--profile", "workflow/profiles/smoke", "--config", "tensorboard=true",
                    cwd=workdir, env=env_of(workdir))
    output = result.stdout + result.stderr
    assert "is not of type 'boolean'" not in output
    if importlib.util.find_spec("tensorboard") is None:
        assert result.returncode != 0 and "pip install -e '.[tensorboard]'" in output, output[-2000:]
    else:
        assert result.returncode == 0, output[-2000:]
