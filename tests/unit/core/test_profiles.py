"""The scheduling settings of the profiles every local run uses (workflow/profiles/default says why)."""

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from rlstudy.runtime.snakemake_scheduler import rounds_when_jobs_end

PROFILES = Path(__file__).resolve().parents[3] / "workflow" / "profiles"
SRC = PROFILES.parents[1] / "src"


@pytest.mark.parametrize("profile", ["default", "smoke"])
def test_local_profiles_schedule_greedily_and_set_no_rate_limit(profile):
    """The greedy selection, not Snakemake's default integer program at every round; and no
    `max-jobs-per-timespan`: a local run has none (the Snakefile's onstart takes the limiter away,
    below), so a timespan here would be a setting that sets nothing."""
    settings = yaml.safe_load((PROFILES / profile / "config.yaml").read_text())
    assert settings["scheduler"] == "greedy"
    assert "max-jobs-per-timespan" not in settings


def toy_workflow(folder: Path, onstart: str, jobs: int) -> subprocess.CompletedProcess:
    """A workflow of `jobs` one-second jobs run on one core under a 30 s rate-limit timespan, with the
    study's scheduler hooks: `onstart`'s body, and an onsuccess that prints how many timers it cancelled."""
    (folder / "Snakefile").write_text(
        f"import sys\nsys.path.insert(0, {str(SRC)!r})\n"
        "from rlstudy.runtime.snakemake_scheduler import cancel_scheduling_timers, rounds_when_jobs_end\n\n"
        f"onstart:\n    {onstart}\n\n"
        "onsuccess:\n    print('cancelled timers:', cancel_scheduling_timers())\n\n"
        f"rule all:\n    input: expand('done{{i}}.txt', i=range({jobs}))\n\n"
        "rule done:\n    output: 'done{i}.txt'\n    shell: 'sleep 1; touch {output}'\n")
    return subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--cores", "1", "--scheduler", "greedy",
                           "--max-jobs-per-timespan", "100/30s"], cwd=folder, capture_output=True, text=True,
                          timeout=120)


def cancelled_timers(result: subprocess.CompletedProcess) -> int:
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split("cancelled timers:")[1].split()[0])


def test_a_local_run_plans_when_its_jobs_end_and_starts_no_timer(tmp_path):
    """The Snakefile's onstart (runtime/snakemake_scheduler.py): without the rate limiter, a local run's
    rounds are its jobs' ends, so three jobs on one core still run one after the other (each round
    after the first starts the next), no scheduling timer is left at the end, and the run does not
    wait out the 30 s timespan: Snakemake's timers had every ended job start a chain of rounds."""
    start = time.monotonic()
    result = toy_workflow(tmp_path, "print('rounds when jobs end:', rounds_when_jobs_end(workflow))", jobs=3)
    seconds = time.monotonic() - start
    assert cancelled_timers(result) == 0
    assert "rounds when jobs end: True" in result.stdout
    assert all((tmp_path / f"done{i}.txt").exists() for i in range(3))
    assert seconds < 20, f"the run took {seconds:.1f} s"


def test_a_run_ends_with_its_last_job_not_with_the_schedulers_last_timer(tmp_path):
    """Where the limiter stays (a run on a cluster; here a run whose onstart keeps it), the Snakefile's
    onsuccess cancels the scheduler's pending timers: the toy exits within seconds of its job, where
    Snakemake alone waited the 30 s timespan out (make study ended a minute after its last job). The
    hook reports the timers it cancelled: at least one was pending."""
    start = time.monotonic()
    result = toy_workflow(tmp_path, "pass", jobs=1)
    seconds = time.monotonic() - start
    assert cancelled_timers(result) >= 1
    assert seconds < 20, f"the run took {seconds:.1f} s"


def test_a_cluster_run_keeps_its_rate_limiter():
    """On a cluster the limiter bounds the submissions: rounds_when_jobs_end leaves it."""
    limiter = object()
    cluster_run = SimpleNamespace(local_exec=False, scheduler=SimpleNamespace(job_rate_limiter=limiter))
    assert rounds_when_jobs_end(cluster_run) is False
    assert cluster_run.scheduler.job_rate_limiter is limiter


@pytest.mark.parametrize("profile", ["default", "smoke", "slurm"])
def test_every_profile_reruns_what_a_killed_snakemake_left_marked_incomplete(profile):
    """docs/reliability.md's recovery (--unlock, then the same command) after a kill -9 of Snakemake
    alone: its jobs finish their outputs, still marked incomplete, and without this the rerun stops
    with IncompleteFilesException (tests/workflow/test_interrupted_runs.py runs it with smoke)."""
    settings = yaml.safe_load((PROFILES / profile / "config.yaml").read_text())
    assert settings["rerun-incomplete"] is True
