"""How much CPU Snakemake's own process spends scheduling, under each scheduling setting.

At paper scale about 500 run_method jobs are ready at once, each running for a minute or so. With
Snakemake 9's defaults the scheduler re-plans every ready job once a second whatever happens
(`--max-jobs-per-timespan 100/1s`: after each round it sets a timer for the rate limit's timespan),
and each round re-evaluates every ready job's params and resources, reads the size of every input
and solves the selection (an integer program when PuLP is installed, the default `ilp` scheduler).
Every round sets a timer of the timespan, and each timer's round sets another: every job that ends
starts one more chain of rounds, so the rounds per minute grow with the jobs done, slower the longer
the timespan. The study's scheduling is the default profile's greedy selection and, for a local run,
no rate limiter at all: the Snakefile's onstart hook takes it away (runtime/snakemake_scheduler.py),
and a round runs when a job ends.

This builds a toy workflow in a temporary folder: `--jobs` jobs that sleep `--sleep` seconds (no
CPU of their own), all ready at once, each listing `--inputs` shared files, with params and resources
computed per job and a `benchmark:` directive as the study's rules have (the study's rules compute
more per job, so the toy's rounds are cheaper than the study's), and the study's onstart hook where
a setting has it. For each setting it runs the toy for `--window` seconds on 2 cores, stops it, and
prints the CPU time of the Snakemake process (user + system, its jobs excluded) per minute of wall
time.

    python benchmarks/snakemake_overhead.py
    python benchmarks/snakemake_overhead.py --jobs 500 --sleep 30 --window 120 --inputs 36
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
SNAKEFILE = '''
import json
import sys

sys.path.insert(0, config["src"])  # the study's hook
from rlstudy.runtime.snakemake_scheduler import rounds_when_jobs_end

onstart:
    if config["rounds_when_jobs_end"]:
        rounds_when_jobs_end(workflow)

CODE = [f"code/m{i}.py" for i in range(1, config["inputs"] + 1)]
SETTING = {f"key{k}": k / 7 for k in range(20)}  # a run's parameters, serialised per job as the study's rules do

rule all:
    input: expand("out/{i}.txt", i=range(config["jobs"]))

rule job:
    input: CODE
    output: "out/{i}.txt"
    params:
        run=lambda w: ["--seed", w.i, "--task", "control", "--out-dir", f"out/{w.i}"],
        setting=lambda w: json.dumps(SETTING, sort_keys=True),
    resources:
        runtime=lambda w: 10,
    priority: 1
    benchmark: "bench/{i}.tsv"
    shell: "sleep {config[sleep]}; touch {output}"
'''
# name -> (the options that differ, whether the study's onstart hook runs); every run adds --cores 2 and
# the toy's config
DEFAULT_PROFILE = ["--profile", str(ROOT / "workflow" / "profiles" / "default")]
SETTINGS = {
    "Snakemake's defaults": ([], False),
    "greedy scheduler": (["--scheduler", "greedy"], False),
    "greedy, a 5 s timespan": (["--scheduler", "greedy", "--max-jobs-per-timespan", "1000/5s"], False),
    "greedy, a minute's timespan": (["--scheduler", "greedy", "--max-jobs-per-timespan", "100000/60s"], False),
    "the study's scheduling": (DEFAULT_PROFILE, True),
}


def run(folder: Path, jobs: int, inputs: int, sleep: float, window: float, options: list[str],
        hook: bool) -> tuple[float, float]:
    """(CPU seconds of the Snakemake process itself, wall seconds) of the toy workflow run for at most
    `window` seconds (then stopped with its jobs)."""
    for name in ("out", "bench", ".snakemake"):
        shutil.rmtree(folder / name, ignore_errors=True)
    (folder / "config.yaml").write_text(f"jobs: {jobs}\ninputs: {inputs}\nsleep: {sleep}\n"
                                        f"rounds_when_jobs_end: {str(hook).lower()}\nsrc: {json.dumps(str(ROOT / 'src'))}\n")
    command = [sys.executable, "-m", "snakemake", "--cores", "2", *options, "--configfile", "config.yaml",
               "--quiet", "all"]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    watched, cpu = psutil.Process(process.pid), 0.0
    while process.poll() is None and time.perf_counter() - start < window:
        try:
            times = watched.cpu_times()
            cpu = times.user + times.system
        except psutil.NoSuchProcess:
            break
        time.sleep(0.2)
    wall = time.perf_counter() - start
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    elif process.returncode != 0:
        raise SystemExit(f"the toy workflow failed:\n{process.stderr.read().decode()[-2000:]}")
    process.wait()
    return cpu, wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=300)
    p.add_argument("--inputs", type=int, nargs="+", default=[36], help="inputs per job (one run per count)")
    p.add_argument("--sleep", type=float, default=20.0, help="seconds each job sleeps")
    p.add_argument("--window", type=float, default=60.0, help="seconds each run lasts at most")
    p.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS))
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "Snakefile").write_text(SNAKEFILE)
        (folder / "code").mkdir()
        for i in range(1, max(args.inputs) + 1):
            (folder / "code" / f"m{i}.py").write_text(f"{i}\n")
        print(f"{args.jobs} ready jobs of `sleep {args.sleep:g}`, 2 cores, each run stopped after {args.window:g} s:")
        for name in args.settings:
            for inputs in args.inputs:
                cpu, wall = run(folder, args.jobs, inputs, args.sleep, args.window, *SETTINGS[name])
                print(f"  {name:28s} {inputs:3d} inputs per job: Snakemake's process {cpu:6.1f} s of CPU in "
                      f"{wall:.0f} s ({60 * cpu / wall:.1f} s per minute)")


if __name__ == "__main__":
    main()
