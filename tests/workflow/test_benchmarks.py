"""Every benchmark script runs, at its smallest scale: a script that nothing runs rots unseen (the
parameter dataclasses lost their defaults and five benchmarks built them bare until they crashed).

Each runs in a fresh process on one thread, from a temporary folder, and must exit with status 0;
what it measures is not checked (no timing here). Nothing runs with --write: the scripts that write
into docs/ (floor.py, timings.py, interval_coverage.py, platform_spread.py) only print. A minute and
a half of scripts in subprocesses, none of them the study's mathematics: with the workflow's tests in
`make test`, out of `make test-fast`'s loop."""

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
# script -> its arguments at its smallest scale (a few seconds each)
QUICK = {
    "floor.py": ["--quick"],
    "update_levers.py": ["--rounds", "1"],
    "agents_speed.py": ["0.1"],  # the least scale at which DDPG and MPO finish an episode (200 steps)
    "diagnostics_overhead.py": ["--scale", "0.01"],
    "offline_rl_speed.py": ["--updates", "10", "--atari-updates", "2"],
    "mpo_speed.py": ["--steps", "200", "--updates", "5"],
    "cbo_step.py": ["--particles", "2", "--samples", "100"],
    "trajectory_speed.py": ["1000"],
    "interval_coverage.py": ["--repetitions", "10"],
    "startup.py": ["--repeats", "1", "rlstudy.bellman.cli.plot_sweep"],
    "job_overhead.py": ["--repeats", "1", "--steps", "1000", "--epochs", "2"],
    # the study's scheduling: the setting that reads the project's profile and hook; its jobs do not sleep
    "snakemake_overhead.py": ["--jobs", "2", "--inputs", "1", "--sleep", "0", "--window", "20",
                              "--settings", "the study's scheduling"],
    "timings.py": ["command", "--label", "a test", "--", "true"],
    "seed_plan.py": ["--study", "--budget", "300"],
    "platform_spread.py": ["--quick"],  # not a timing: the confirmatory seed counts, planned from claims.yaml
    "run_floor.py": ["--quick"],
}
# modules the scripts import (run through them), and the script offline_rl_speed.py runs in d3rlpy's venv
NOT_SCRIPTS = {"bellman_problem.py", "record.py", "d3rlpy_bcq_speed.py"}
# scripts that read a workflow run's files: each runs on a project made by its own test below
OWN_TEST = {"seed_costs.py"}


def run(script: str, *args: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}  # as their docstrings run them
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{script} {' '.join(args)}:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    return result.stdout


def test_every_benchmark_is_run_here():
    """A new script gets its quick arguments in QUICK (or is a module the scripts import)."""
    assert {path.name for path in BENCHMARKS.glob("*.py")} == set(QUICK) | NOT_SCRIPTS | OWN_TEST


@pytest.mark.parametrize("script", sorted(QUICK))
def test_benchmark_runs_at_its_smallest_scale(script, tmp_path):
    run(script, *QUICK[script], cwd=tmp_path)


def test_run_floor_counts_each_stages_jobs_and_takes_only_a_commit(tmp_path):
    """run_floor.py at the checkout's counts: one row per stage, its jobs the seeds of its list times its
    estimators, tasks and datasets (the sweep: times its grid points); --counts-from refuses anything but a
    commit's hex digits before it reaches git."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    counts = config["confirmatory_block"]["counts"]
    printed = run("run_floor.py", "--quick", "--no-authors", cwd=tmp_path)
    sgd = len(config["sgd"]["estimators"])
    assert f"| SGD, control | {counts['seeds.control'] * sgd} | " in printed
    adaptive = config["cbo"]["settings"]["cbo-adaptive"]
    assert (f"| CBO, cbo-adaptive | {counts['cbo.settings.cbo-adaptive.seeds'] * len(adaptive['estimators']) * 2} | "
            f"{adaptive['params']['epochs']} | ") in printed
    points = sum(math.prod(len(values) for axis, values in spec.items() if axis != "with")
                 for spec in config["cbo_sweep"]["grids"].values())
    assert f"| CBO sweep | {counts['cbo_sweep.seeds'] * points} | 300 | " in printed and "minutes** of wall" in printed
    refused = subprocess.run([sys.executable, str(BENCHMARKS / "run_floor.py"), "--counts-from", "HEAD;true"],
                             cwd=tmp_path, capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert refused.returncode != 0 and "expected a commit's hex digits" in refused.stderr


def test_startup_times_a_snakemake_dry_run(tmp_path):
    """startup.py --snakemake: a dry run in the checkout (the smoke profile: its smaller DAG), timed."""
    printed = run("startup.py", "--snakemake", "--repeats", "1", "--snakemake-args",
                  "--profile workflow/profiles/smoke --cores 1", cwd=tmp_path)
    assert printed.startswith("snakemake -n --profile workflow/profiles/smoke --cores 1: ") and " s CPU " in printed


@pytest.mark.skipif(importlib.util.find_spec("d3rlpy") is None, reason="d3rlpy is not installed (its own venv)")
def test_d3rlpy_comparison_runs(tmp_path):
    run("offline_rl_speed.py", *QUICK["offline_rl_speed.py"], "--d3rlpy-python", sys.executable, cwd=tmp_path)


def test_seed_costs_charges_each_job_to_its_list(tmp_path):
    """seed_costs.py on a project of two seeds of SGD evaluation runs (2 and 4 minutes) and a trajectory job
    (30 s): 3 job-minutes per seed of seeds.evaluation, 0.5 of fixed cost; a project without benchmark
    files is refused in one line."""
    logs = tmp_path / "project" / "logs"
    for seed, seconds in ((0, 120), (1, 240)):
        (logs / "runs/ours/evaluation/sgd/DS").mkdir(parents=True, exist_ok=True)
        (logs / f"runs/ours/evaluation/sgd/DS/seed{seed}.benchmark.tsv").write_text(f"s\th:m:s\n{seconds}\t0:02:00\n")
    (logs / "trajectory").mkdir()
    (logs / "trajectory" / "long.benchmark.tsv").write_text("s\th:m:s\n30\t0:00:30\n")
    printed = run("seed_costs.py", "--project", str(tmp_path / "project"), cwd=tmp_path)
    assert "| seeds.evaluation | 2 | 2 | 6.00 | 3.00 |" in printed and "0.5 job-minutes" in printed
    result = subprocess.run([sys.executable, str(BENCHMARKS / "seed_costs.py"), "--project", str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode != 0 and "no benchmark files" in result.stderr


def test_timings_reads_a_workflow_run(tmp_path):
    """timings.py's `workflow` mode on a project folder with one benchmarked job and a Snakemake log."""
    project = tmp_path / "project"
    (project / "logs" / "stage").mkdir(parents=True)
    (project / "logs" / "stage" / "job.benchmark.tsv").write_text("s\th:m:s\tcpu_time\n2.5\t0:00:02\t2.0\n")
    (project / ".snakemake" / "log").mkdir(parents=True)
    (project / ".snakemake" / "log" / "run.snakemake.log").write_text(
        "[Tue Nov 24 19:18:33 2026]\nrule train:\n    benchmark: logs/stage/job.benchmark.tsv\nFinished job 0.\n"
        "[Tue Nov 24 19:18:36 2026]\n")
    cold = run("timings.py", "workflow", "--label", "a test", "--project", str(project), cwd=tmp_path)
    assert "| a test | 0.1 min | 1 | 0.0 |" in cold and "| stage | 1 | 0.0 | 0.0 |" in cold
    row = next(line for line in cold.splitlines() if line.startswith("| a test |"))
    assert re.search(r"; on .+ \((?:AVX-512|AVX2|no AVX2)\), \d+ cores; Python 3", row), row  # each row names its machine
    # jobs forked by the warm-start server: Snakemake's CPU samples saw their clients only, so none is shown
    (project / "logs" / "warmstart.log").write_text("warmstart: serving /tmp/x/socket after 2.0 s of imports\n")
    warm = run("timings.py", "workflow", "--label", "a test", "--project", str(project), cwd=tmp_path)
    assert "| a test | 0.1 min | 1 |  |" in warm and "jobs started warm" in warm and "| stage | 1 |  | 0.0 |" in warm


def test_timings_reads_the_jobs_of_the_run_it_is_given(tmp_path):
    """A workflow row covers the jobs its log ran, not every benchmark file of the checkout: two runs
    of one checkout (a segment resumed later, the report's own run) each get their own."""
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    for job, wall in (("a", 60.0), ("b", 300.0)):
        tsv = tmp_path / "logs" / "runs" / f"{job}.benchmark.tsv"
        tsv.parent.mkdir(parents=True, exist_ok=True)
        tsv.write_text(f"s\tcpu_time\n{wall}\t{wall}\n")
    for name, job, end in (("2026-01-01T000000.000000", "a", "00:02:00"), ("2026-01-02T000000.000000", "b", "00:10:00")):
        (logs / f"{name}.snakemake.log").write_text(
            f"[Thu Jan  1 00:00:00 2026]\nrule train:\n    benchmark: logs/runs/{job}.benchmark.tsv\n"
            f"[Thu Jan  1 {end} 2026]\nFinished job 0.\n")
    first = run("timings.py", "workflow", "--label", "first", "--project", str(tmp_path),
                "--log", str(logs / "2026-01-01T000000.000000.snakemake.log"), cwd=tmp_path)
    newest = run("timings.py", "workflow", "--label", "newest", "--project", str(tmp_path), cwd=tmp_path)
    assert "| first | 2.0 min | 1 |" in first and "| runs | 1 | 1.0 | 1.0 |" in first
    assert "| newest | 10.0 min | 1 |" in newest and "| runs | 1 | 5.0 | 5.0 |" in newest
    # a run resumed over two sessions: both logs, their spans summed, their jobs together
    both = run("timings.py", "workflow", "--label", "both", "--project", str(tmp_path),
               *(option for log in sorted(logs.iterdir()) for option in ("--log", str(log))), cwd=tmp_path)
    assert "| both | 12.0 min | 2 |" in both and "| runs | 2 | 6.0 | 6.0 |" in both and "Snakemake logs 2026" in both
