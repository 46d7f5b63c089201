"""How long the workflow and the test suite take, measured and written into docs/speed.md by a command.

    python benchmarks/timings.py workflow --label "make figures" [--project DIR] [--write]
    python benchmarks/timings.py command --label "make test" [--write] -- make test

`workflow` reads a Snakemake run of the project DIR (default: this checkout): its wall time from the
first to the last timestamp of its log (--log; default: the newest .snakemake/log/*.snakemake.log,
which is the report's own run after `make report` or `make readme`; a run of several Snakemake runs, one
per look of a group-sequential design or per session it was resumed in, gives each one's log, --log A
--log B: its wall is the sum of their spans), the jobs it finished, and the
wall and CPU time of every job it ran from that job's benchmark file (the `benchmark:` lines of the
log, under logs/: the training jobs; figures and tables have none, and cost seconds). Snakemake
samples a job's CPU time every 0.5 s for its first 15 s and every 30 s after, and keeps the last
sample: a job that ends between samples is undercounted (a 29 s job by half), so the CPU column is a
lower bound. Per stage (the first folder under logs/) it prints jobs, CPU minutes, the jobs' wall
minutes (each job's own wall, slowed by whatever ran beside it), the longest job, and the jobs' wall
over the cores: the run's wall if no core ever idled. Where the run's jobs started warm (forks of one server process,
src/rlstudy/runtime/warmstart/: its log, logs/warmstart.log, says it served), Snakemake's samples saw
only each job's client, so the CPU columns are left empty. `command` runs a command and times it.

--write puts the row into the `timings` block of docs/speed.md (a row of the same label is
replaced) and, for `workflow` without --keep-stages, the per-stage table into the `stages` block,
each with the commit of the measured checkout, the date, the load average (a wall time is a
measurement of idle cores only when nothing else ran: the load says whether it did) and the machine
(benchmarks/record.py's machine(): the same suite ran 2.5 times slower on one CPU than on another).
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
from record import DOC, ROOT, block_of, commit, load_note, machine, now, write_block

SCRIPT = "timings.py"
HEADER = ["| what | wall | jobs | CPU minutes of the benchmarked jobs | commit | date | conditions |",
          "| --- | ---: | ---: | ---: | --- | --- | --- |"]
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", re.M)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


BENCHMARK = re.compile(r"^\s+benchmark: (logs/\S+\.benchmark\.tsv)$", re.M)


def snakemake_logs(project: Path, given: list[Path] | None) -> list[Path]:
    """The run's logs: those given, or the newest under the project's .snakemake/log."""
    if given:
        for log in given:
            if not log.is_file():
                sys.exit(f"--log {log}: no such file")
        return given
    logs = sorted((project / ".snakemake" / "log").glob("*.snakemake.log"))
    if not logs:
        sys.exit(f"no Snakemake log under {project / '.snakemake/log'}: run the workflow first")
    return logs[-1:]


def job_times(project: Path, logs: list[Path]) -> pd.DataFrame:
    """One row per benchmarked job the run of `logs` ran: its stage, name, wall and CPU seconds."""
    rows = []
    for tsv in sorted({project / name for log in logs for name in BENCHMARK.findall(log.read_text())}):
        name = tsv.relative_to(project / "logs")
        last = pd.read_csv(tsv, sep="\t").iloc[-1]
        rows.append({"stage": name.parts[0], "job": str(name).removesuffix(".benchmark.tsv"),
                     "wall_s": float(last["s"]), "cpu_s": float(last["cpu_time"])})
    if not rows:
        sys.exit(f"{', '.join(map(str, logs))}: the run ran no job with a benchmark file under {project / 'logs'}")
    return pd.DataFrame(rows)


def run_span(logs: list[Path]) -> tuple[float, int]:
    """Wall seconds from the first to the last timestamp of each Snakemake log, summed over the logs (the
    sessions of one run: the time between them is not the run's), and the jobs they finished."""
    wall, finished = 0.0, 0
    for log in logs:
        text = log.read_text()
        stamps = [datetime.datetime.strptime(s, "%a %b %d %H:%M:%S %Y") for s in STAMP.findall(text)]
        if len(stamps) < 2:
            sys.exit(f"{log}: fewer than two timestamps, nothing to time")
        wall, finished = wall + (stamps[-1] - stamps[0]).total_seconds(), finished + text.count("Finished job")
    return wall, finished


def ran_warm(project: Path) -> bool:
    """Whether the last run's jobs were served by the warm-start server (its log names the socket)."""
    log = project / "logs" / "warmstart.log"
    return log.exists() and "serving" in log.read_text()


def cpu_minutes(seconds: float, warm: bool) -> str:
    return "" if warm else f"{seconds / 60:.1f}"


def stage_table(jobs: pd.DataFrame, cores: int, warm: bool) -> str:
    """Per stage: jobs, CPU minutes as Snakemake sampled them (none where the jobs ran warm), the jobs'
    wall minutes, the longest job, and the jobs' wall over the cores (the run's wall when no core idles)."""
    stages = jobs.groupby("stage").agg(jobs=("job", "count"), cpu_s=("cpu_s", "sum"), wall_s=("wall_s", "sum"),
                                       longest_s=("wall_s", "max"))
    lines = ["| stage (logs/...) | benchmarked jobs | CPU minutes (sampled: a lower bound) | job wall minutes | "
             "longest job (wall) | job wall / cores |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    total = pd.Series({"jobs": len(jobs), "cpu_s": jobs["cpu_s"].sum(), "wall_s": jobs["wall_s"].sum(),
                       "longest_s": jobs["wall_s"].max()}, name="all")
    for stage, row in [*stages.sort_values("wall_s", ascending=False).iterrows(), ("all", total)]:
        lines.append(f"| {stage} | {int(row.jobs)} | {cpu_minutes(row.cpu_s, warm)} | {row.wall_s / 60:.1f} | "
                     f"{minutes(row.longest_s)} | {minutes(row.wall_s / cores)} |")
    return "\n".join(lines)


def upsert(label: str, row: str) -> str:
    """The timings table with `row` in place of the row labelled `label` (or added)."""
    current = [line for line in block_of("timings", SCRIPT).splitlines() if line.startswith("| ")]
    kept = [line for line in current[2:] if not line.startswith(f"| {label} |")]
    return "\n".join(HEADER + kept + [row])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("workflow", "command"))
    p.add_argument("--label", required=True, help="the row's name, e.g. 'make figures (paper scale)'")
    p.add_argument("--project", type=Path, default=ROOT, help="the checkout whose workflow run is read")
    p.add_argument("--note", default="", help="what the row measured beyond its label (config, clone)")
    p.add_argument("--log", type=Path, action="append",
                   help="the run's Snakemake log, once per Snakemake run of it (per look, per resumed session; "
                        "default: the project's newest)")
    p.add_argument("--keep-stages", action="store_true", help="write the row only, not the stage table")
    p.add_argument("--write", action="store_true", help=f"write into {DOC.relative_to(ROOT)}")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args, command = p.parse_args(argv[:split]), argv[split + 1:]
    if "|" in args.label or "|" in args.note:
        sys.exit("--label and --note go into a Markdown table: no '|'")
    cores = os.cpu_count() or 1
    if args.what == "workflow":
        log_files = snakemake_logs(args.project, args.log)
        jobs = job_times(args.project, log_files)
        wall, finished = run_span(log_files)
        log = ", ".join(log_file.name for log_file in log_files)
        where = commit(args.project)
        warm = ran_warm(args.project)
        conditions = (f"{args.note + '; ' if args.note else ''}"
                      f"{'jobs started warm (no CPU sampled); ' if warm else ''}"
                      f"Snakemake log{'s' if len(log_files) > 1 else ''} {log}; on {machine()}")
        row = (f"| {args.label} | {minutes(wall)} | {finished} | {cpu_minutes(jobs['cpu_s'].sum(), warm)} | "
               f"{where} | {now()} | {conditions} |")
        stages = (f"The last run of `{args.label}` by stage, from its benchmark files (commit {where}, read "
                  f"{now()}, {machine()}):\n\n" + stage_table(jobs, cores, warm))
        print(stages)
        if args.keep_stages:
            stages = None
    else:
        if not command:
            sys.exit("give the command to time after --")
        before, start = os.getloadavg()[0], time.perf_counter()
        status = subprocess.run(command, cwd=args.project).returncode
        wall = time.perf_counter() - start
        conditions = (f"{args.note + '; ' if args.note else ''}exit status {status}; "
                      f"{load_note(before, os.getloadavg()[0])}; on {machine()}")
        row = f"| {args.label} | {minutes(wall)} | | | {commit(args.project)} | {now()} | {conditions} |"
        stages = None
    print(row)
    if args.write:
        write_block("timings", SCRIPT, f"Rows written by `python benchmarks/{SCRIPT} --write`, each on the machine its "
                    "conditions name (the older rows name none: the text below the table says which machine ran "
                    "those it compares).\n\n" + upsert(args.label, row))
        if stages:
            write_block("stages", SCRIPT, stages)
        print(f"written into {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
