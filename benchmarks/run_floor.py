"""The least wall time the SGD and CBO jobs of a whole run can take on this machine, however they are coded.

Each job's steps (config.yaml's epochs, mini-batches, particles and samples, at the seed counts of the
confirmatory block) times the floor of one step (floor.py: its matrix products and transcendentals at
this machine's best measured rate for each, one thread), summed over the jobs and spread over the cores
with no core ever idle. What the floor leaves out (element-wise passes, random numbers, memory traffic,
Python, starting a job) only adds, and so do the run's other jobs (the agents, the offline chain, the
budget, Q*, the trajectories, the figures and tables). So no code of these jobs makes the whole run
faster than this, unless it computes a primitive faster than every implementation floor.py measures
(NumPy's, PyTorch's and the project's compiled ones) or computes less: fewer seeds, steps or samples,
or narrower numbers.

The jobs are those of the workflow: every SGD estimator and CBO setting on each task and dataset (ours,
and the authors' unless `--no-authors`), one job per seed of its list; every point of the sweep's grids, one
job per sweep seed. A job's SGD steps are epochs x (its trajectory's transitions less two) // batch, its
CBO steps epochs x particles // particle_batch, as train_sgd and train_cbo count them.

    PYTHONPATH=src python benchmarks/run_floor.py                      # the checkout's confirmatory counts
    PYTHONPATH=src python benchmarks/run_floor.py --counts-from 2a123da  # protocol 1's (that commit's config.yaml)
    PYTHONPATH=src python benchmarks/run_floor.py --counts-from 2a123da --write   # into docs/speed.md
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass

from floor import ROUNDS, Arithmetic, Primitives, cbo_arithmetic, sgd_arithmetic  # first: it pins the thread counts
from record import ROOT, commit, load_note, machine, now, write_block

from rlstudy.bellman.learners.sweep import resolve_sweep, sweep_points
from rlstudy.core.config import load_yaml
from rlstudy.core.errors import InputError
from rlstudy.report.protocol import config_at

DATASETS_WITH_AUTHORS = ("ours", "authors")
COMMIT = re.compile(r"[0-9a-f]{7,40}")


@dataclass
class JobGroup:
    """Jobs alike: how many, the steps of each, and one step's arithmetic."""
    stage: str
    jobs: int
    steps: int
    arithmetic: Arithmetic

    def floor_minutes(self, prims: Primitives) -> float:
        return self.jobs * self.steps * self.arithmetic.floor(prims) / 60


def confirmatory_counts(commit_name: str | None) -> tuple[dict[str, int], str]:
    """The confirmatory block's seed counts: of the checkout's config.yaml, or of that file at a commit
    (report/protocol.config_at: git show and the strict YAML loader; the commit is checked to be hex
    digits first, so that git cannot take it for an option)."""
    if commit_name is not None and not COMMIT.fullmatch(commit_name):
        raise SystemExit(f"--counts-from: expected a commit's hex digits, got {commit_name!r}")
    try:
        config = config_at(ROOT, commit_name)
    except InputError as err:
        raise SystemExit(f"--counts-from {commit_name}: {err}" if commit_name else str(err)) from err
    source = "the checkout's config.yaml" if commit_name is None else f"config.yaml at {commit_name}"
    block = config.get("confirmatory_block") if isinstance(config, dict) else None
    counts = block.get("counts") if isinstance(block, dict) else None
    if not isinstance(counts, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts.values()):
        raise SystemExit(f"{source}: confirmatory_block.counts is not a mapping of seed lists to counts")
    return counts, source


def job_groups(config: dict, counts: dict[str, int], datasets: tuple[str, ...]) -> list[JobGroup]:
    """Every SGD, CBO and sweep job of a run at these counts, grouped by what each step computes."""
    def seeds_of(key: str) -> int:
        if key not in counts:
            raise SystemExit(f"the seed counts (confirmatory_block.counts) have no {key!r}")
        return counts[key]

    transitions = config["trajectories"]["short"] - 2
    groups = []
    sgd = config["sgd"]
    for task in config["tasks"]:
        seeds = seeds_of(f"seeds.{task}")
        params = sgd[task]
        for estimator in sgd["estimators"]:
            groups.append(JobGroup(f"SGD, {task}", seeds * len(datasets),
                                   params["epochs"] * transitions // params["batch_size"],
                                   sgd_arithmetic(estimator, params["batch_size"])))
    for name, setting in config["cbo"]["settings"].items():
        params = setting["params"]
        for estimator in setting["estimators"]:
            groups.append(JobGroup(f"CBO, {name}", seeds_of(f"cbo.settings.{name}.seeds") * len(config["tasks"]) * len(datasets),
                                   params["epochs"] * params["particles"] // params["particle_batch"],
                                   cbo_arithmetic(estimator, params["particle_batch"], params["samples"])))
    sweep = resolve_sweep(config)
    for point in sweep_points(sweep):
        params = point.params
        groups.append(JobGroup("CBO sweep", seeds_of("cbo_sweep.seeds"),
                               params["epochs"] * params["particles"] // params["particle_batch"],
                               cbo_arithmetic(sweep["estimator"], params["particle_batch"], params["samples"])))
    return groups


def table(groups: list[JobGroup], prims: Primitives) -> tuple[str, float]:
    stages: dict[str, list[JobGroup]] = {}
    for group in groups:
        stages.setdefault(group.stage, []).append(group)
    lines = ["| jobs of | jobs | steps per job | floor job-minutes |", "| --- | ---: | --- | ---: |"]
    total = 0.0
    for stage, members in stages.items():
        minutes = sum(group.floor_minutes(prims) for group in members)
        total += minutes
        steps = sorted({group.steps for group in members})
        shown = str(steps[0]) if len(steps) == 1 else f"{steps[0]}-{steps[-1]}"
        lines.append(f"| {stage} | {sum(group.jobs for group in members)} | {shown} | {minutes:.1f} |")
    lines.append(f"| all | {sum(group.jobs for group in groups)} | | {total:.1f} |")
    return "\n".join(lines), total


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--counts-from", metavar="COMMIT", help="the confirmatory counts of config.yaml at this commit "
                   "(default: the checkout's)")
    p.add_argument("--no-authors", action="store_true", help="without the authors' data (their runs are not counted)")
    p.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="cores the jobs share (default: this machine's)")
    p.add_argument("--quick", action="store_true", help="fewer timing rounds (a smoke test of this script)")
    p.add_argument("--write", action="store_true", help="write the table into docs/speed.md")
    args = p.parse_args()
    if args.cores < 1:
        p.error("--cores must be at least 1")
    if args.write and args.quick:
        p.error("--write writes the full measurement: not with --quick")
    load_before = os.getloadavg()[0]
    config = load_yaml(ROOT / "config.yaml", "config file")
    counts, source = confirmatory_counts(args.counts_from)
    datasets = ("ours",) if args.no_authors else DATASETS_WITH_AUTHORS
    groups = job_groups(config, counts, datasets)
    prims = Primitives(2 if args.quick else ROUNDS)
    shapes = {shape for group in groups for shape in group.arithmetic.gemms}
    for _ in range(prims.repeats):
        prims.measure(shapes)
    prims.time_unpinned_gemms(shapes)
    rows, total = table(groups, prims)
    wall = total / args.cores
    text = (f"Generated by `python benchmarks/run_floor.py{' --counts-from ' + args.counts_from if args.counts_from else ''}"
            f"{' --no-authors' if args.no_authors else ''} --write` at commit {commit()}, {now()}, on {machine()}, "
            f"one thread a job ({load_note(load_before, os.getloadavg()[0])}). The seed counts of {source}, "
            f"datasets: {', '.join(datasets)}.\n\n{rows}\n\n"
            f"At the floor, with none of its {args.cores} cores ever idle, these jobs alone take **{wall:.1f} minutes** "
            "of wall: the whole run at these counts takes longer on this machine, however its jobs are coded.")
    print(text)
    if args.write:
        write_block("run-floor", "run_floor.py", text)
        print("\nwritten into docs/speed.md")


if __name__ == "__main__":
    main()
