"""How much CPU Snakemake's own process spends scheduling, against the inputs each job lists.

Snakemake re-reads the size of every input of every ready job at each scheduling round
(JobScheduler.update_input_sizes), so its cost grows with ready jobs x inputs per job. The study's
run_method jobs list ~36 inputs each, ~30 of them the code modules the step imports (sources()),
and ~500 of them are ready at once at paper scale. This builds a toy workflow in a temporary folder:
`--jobs` jobs that sleep (no CPU of their own), all ready at once, each listing `--inputs` shared
files, with a `benchmark:` directive as the study's rules have; it runs it for each input count and
prints the CPU time of the Snakemake process (user + system, its children excluded).

    python benchmarks/snakemake_overhead.py                       # 300 jobs, 36 and 6 inputs each
    python benchmarks/snakemake_overhead.py --jobs 100 --inputs 36 6 1
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

SNAKEFILE = '''
CODE = [f"code/m{i}.py" for i in range(1, config["inputs"] + 1)]

rule all:
    input: expand("out/{i}.txt", i=range(config["jobs"]))

rule job:
    input: CODE
    output: "out/{i}.txt"
    benchmark: "bench/{i}.tsv"
    shell: "sleep {config[sleep]}; touch {output}"
'''


def run(folder: Path, jobs: int, inputs: int, sleep: float) -> tuple[float, float]:
    """(CPU seconds of the Snakemake process itself, wall seconds) of one run of the toy workflow: its
    own user + system time, read until it exits (its jobs' shells are other processes)."""
    for name in ("out", "bench", ".snakemake"):
        shutil.rmtree(folder / name, ignore_errors=True)
    (folder / "config.yaml").write_text(f"jobs: {jobs}\ninputs: {inputs}\nsleep: {sleep}\n")
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "--scheduler", "greedy",
               "--configfile", "config.yaml", "--quiet", "all"]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    watched, cpu = psutil.Process(process.pid), 0.0
    while process.poll() is None:
        try:
            times = watched.cpu_times()
            cpu = times.user + times.system
        except psutil.NoSuchProcess:
            break
        time.sleep(0.2)
    wall = time.perf_counter() - start
    if process.wait() != 0:
        raise SystemExit(f"the toy workflow failed:\n{process.stderr.read().decode()[-2000:]}")
    return cpu, wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=300)
    p.add_argument("--inputs", type=int, nargs="+", default=[36, 6])
    p.add_argument("--sleep", type=float, default=0.5, help="seconds each job sleeps")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "Snakefile").write_text(SNAKEFILE)
        (folder / "code").mkdir()
        for i in range(1, max(args.inputs) + 1):
            (folder / "code" / f"m{i}.py").write_text(f"{i}\n")
        print(f"{args.jobs} ready jobs of `sleep {args.sleep}`, 2 cores, greedy scheduler:")
        for inputs in args.inputs:
            cpu, wall = run(folder, args.jobs, inputs, args.sleep)
            print(f"  {inputs:3d} inputs per job: Snakemake's process {cpu:6.1f} s of CPU "
                  f"({1000 * cpu / args.jobs:.0f} ms per job), wall {wall:.0f} s")


if __name__ == "__main__":
    main()
