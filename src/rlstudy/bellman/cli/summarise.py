"""Collect every run's error curve into results/summary.csv (one row per run) and
results/summary_stats.csv (one row per dataset, task, optimizer and method, over its seeds).

Each final error is measured twice: `final_rel_error` against the learned Q* (the notebook's
metric) and `final_rel_error_exact` against the exact Q. The statistics over seeds (n, mean,
median, IQM, and a seeded 95 % bootstrap interval of the mean) are given for both.
"""

from __future__ import annotations

import pandas as pd

from rlstudy.bellman.error_curves import RUN_KEYS as KEYS
from rlstudy.bellman.error_curves import load_error_curves
from rlstudy.core import seeding
from rlstudy.core.cli import finite_float, integer_from, parser, run
from rlstudy.core.io import ensure_writable_paths, provenance, save_csv
from rlstudy.core.statistics import seed_summary

GROUP = KEYS[:-1]  # a run's keys but its seed
FINALS = ("final_rel_error", "final_rel_error_exact")


def summarise(curves: pd.DataFrame, converged_below: float) -> pd.DataFrame:
    rows = curves.groupby(KEYS, sort=True).agg(iterations=("iteration", "max"),
                                               final_rel_error=("rel_error", "last"),
                                               min_rel_error=("rel_error", "min"),
                                               final_rel_error_exact=("rel_error_exact", "last"),
                                               min_rel_error_exact=("rel_error_exact", "min"),
                                               evaluations=("evaluations", "last")).reset_index()
    rows["converged"] = rows["final_rel_error"] <= converged_below
    rows["converged_exact"] = rows["final_rel_error_exact"] <= converged_below
    return rows


def summary_stats(table: pd.DataFrame, master_seed: int, resamples: int) -> pd.DataFrame:
    """One row per group: each final error's statistics over the group's seeds. Each bootstrap draws
    from its own stream, named by the group and the column, so adding a group moves no other."""
    rows = []
    for group, runs in table.groupby(GROUP, sort=True):
        row = {**dict(zip(GROUP, group)), "n": len(runs)}
        for column in FINALS:
            rng = seeding.numpy_rng(master_seed, "bootstrap", *map(str, group), column)
            stats = seed_summary(runs[column].to_numpy(), rng, resamples)
            row |= {f"{column}_{name}": value for name, value in stats.items() if name != "n"}
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--curves", nargs="+", required=True, help="errors.csv of every run")
    p.add_argument("--converged-below", type=finite_float, required=True,
                   help="a run counts as converged when its final e_k/e_0 is at most this")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed (the bootstrap's streams)")
    p.add_argument("--resamples", type=integer_from(100), default=10_000, help="bootstrap resamples")
    p.add_argument("--out", required=True, help="the per-run table (csv)")
    p.add_argument("--stats-out", required=True, help="the per-group table over seeds (csv)")
    args = p.parse_args()
    ensure_writable_paths(args.out, args.stats_out)  # both, before either is written
    curves = pd.concat(load_error_curves(args.curves))
    table = summarise(curves, args.converged_below)
    stats = summary_stats(table, args.seed, args.resamples)
    print(table.to_string(index=False))
    print(stats.to_string(index=False))
    record = provenance({"converged_below": args.converged_below, "resamples": args.resamples}, args.seed,
                        {path: path for path in args.curves})
    save_csv(args.out, table, record)
    save_csv(args.stats_out, stats, record)


if __name__ == "__main__":
    run(main)
