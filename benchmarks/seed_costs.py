"""What one seed of each replicate seed list costs, in job-minutes (a job's wall on one core), from the
benchmark files of a workflow run: the design's `confirmatory_block.design.job_minutes` (report/design.py),
measured instead of typed.

    python benchmarks/seed_costs.py --project DIR [--write]   # --write: the block 'seed-costs' of docs/speed.md

Run it on a run of one seed per list, at paper scale, with the authors' data (a configfile giving each
list one seed, `seed_block: exploratory`): each training job's wall (logs/**/*.benchmark.tsv) is charged
to the list whose seed it runs, summed, and divided by the seeds of that list the run made. Jobs of no
list (trajectories, references, the budget, figures, tables) are the run's fixed cost, printed apart.
The walls are those of jobs run two at a time on 2 cores, as a paper run runs them: slowed by whatever
ran beside them, so a measurement of idle cores only when nothing else ran.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import pandas as pd
from record import commit, machine, now, write_block

AGENTS = ("qtable", "linear_q", "dqn", "ddpg", "mpo")
RULES = (  # (pattern on the path under logs/, the seed list it belongs to)
    (r"runs/[^/]+/evaluation/sgd/", "seeds.evaluation"),
    (r"runs/[^/]+/control/sgd/", "seeds.control"),
    (r"runs/[^/]+/[^/]+/cbo/", "cbo.settings.cbo.seeds"),
    (r"runs/[^/]+/[^/]+/cbo-adaptive/", "cbo.settings.cbo-adaptive.seeds"),
    (r"sweep/", "cbo_sweep.seeds"),
    (r"offline/", "offline.seeds"),
    *((rf"agents/{agent}/", f"{agent}.seeds") for agent in AGENTS),
)
SEED = re.compile(r"seed(\d+)")


def list_of(path: str) -> str | None:
    return next((key for pattern, key in RULES if re.match(pattern, path)), None)


def costs(logs: Path) -> tuple[pd.DataFrame, float]:
    """Per list: its jobs, seeds, job-minutes and job-minutes per seed; and the fixed cost in job-minutes."""
    rows, fixed = [], 0.0
    for path in sorted(logs.rglob("*.benchmark.tsv")):
        wall = float(pd.read_csv(path, sep="\t")["s"].iloc[-1]) / 60.0
        if not math.isfinite(wall) or wall < 0:
            raise SystemExit(f"{path}: a job wall of {wall * 60!r} s: not a Snakemake benchmark file")
        where = path.relative_to(logs).as_posix()
        key = list_of(where)
        if key is None:
            fixed += wall
            continue
        seed = SEED.search(where)
        rows.append({"list": key, "seed": seed.group(1) if seed else "", "minutes": wall})
    jobs = pd.DataFrame(rows, columns=["list", "seed", "minutes"])
    table = jobs.groupby("list").agg(jobs=("minutes", "size"), seeds=("seed", "nunique"), job_minutes=("minutes", "sum"))
    table["per_seed"] = (table["job_minutes"] / table["seeds"]).round(2)
    return table.reset_index(), fixed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--project", type=Path, default=Path("."), help="the checkout whose logs/ holds the run")
    p.add_argument("--write", action="store_true", help="write the table into docs/speed.md's block 'seed-costs'")
    args = p.parse_args()
    if not any((args.project / "logs").rglob("*.benchmark.tsv")):
        raise SystemExit(f"{args.project / 'logs'}: no benchmark files (logs/**/*.benchmark.tsv): not a workflow run")
    table, fixed = costs(args.project / "logs")
    lines = [f"Job-minutes per seed of each list, from the benchmark files of {args.project.resolve().name}'s run "
             f"(commit {commit(args.project)}, read {now()}, {machine()}):", "",
             "| seed list | jobs | seeds | job-minutes | job-minutes per seed |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {row['list']} | {row['jobs']} | {row['seeds']} | {row['job_minutes']:.2f} | {row['per_seed']:.2f} |"
              for row in table.to_dict("records")]
    lines.append(f"\nFixed cost (the jobs of no list: trajectories, references, the budget): {fixed:.1f} job-minutes.")
    print("\n".join(lines))
    if args.write:
        write_block("seed-costs", "seed_costs.py", "\n".join(lines))


if __name__ == "__main__":
    main()
