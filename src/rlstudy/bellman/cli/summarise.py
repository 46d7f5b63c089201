"""Collect every run's error curve into results/summary.csv (one row per run) and
results/summary_stats.csv (one row per dataset, task, setting and estimator, over its seeds).

Each final error is measured twice: `final_rel_error` against the learned Q* (the notebook's
metric) and `final_rel_error_exact` against the exact Q. The final network (q.pt beside each
errors.csv) is also measured against the exact Q on its own grid (metrics.exact_scores):
`final_error_exact_normalised` and `final_error_exact_common_normalised` (the per-action-centred
error and the common-centred one, which sees an offset between the actions, each over the exact Q's
norm), and for control `final_greedy_shortfall` and `final_greedy_wrong_share` (its greedy policy
evaluated exactly: bellman/problem/greedy.py; empty for evaluation runs); then, appended last,
`final_error_exact_weighted_normalised`: the centred error weighted by the stationary state density
of the task's behaviour policy (where the data are: bellman/problem/stationary.py, metrics.py), over the
exact Q's norm in that metric. The statistics over seeds (n,
mean, median, IQM, and the t interval of the mean, 95 %: core/statistics.py) are given for each; a
column empty for a whole group (the greedy ones on evaluation) has empty statistics.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.bellman.results.error_curves import RUN_KEYS as KEYS
from rlstudy.bellman.results.error_curves import load_error_curves
from rlstudy.bellman.problem.exact import load_exact
from rlstudy.bellman.problem.greedy import GreedyJudge
from rlstudy.bellman.learners.metrics import GRID_POINTS, exact_scores
from rlstudy.bellman.numerics.compiled.qnet import load_network
from rlstudy.bellman.problem.sde import Dynamics, Problem
from rlstudy.bellman.problem.stationary import load_density
from rlstudy.core.cli import build, finite_float, json_arg, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import ensure_writable_paths, save_csv
from rlstudy.core.provenance import provenance
from rlstudy.core.statistics import seed_summary

GROUP = KEYS[:-1]  # a run's keys but its seed
EXACT_SCORES = ("final_error_exact_normalised", "final_error_exact_common_normalised", "final_greedy_shortfall",
                "final_greedy_wrong_share", "final_error_exact_weighted_normalised")
FINALS = ("final_rel_error", "final_rel_error_exact", *EXACT_SCORES)
EXACT_ENTRY_KEYS = {"dataset", "task", "exact", "dynamics", "density"}


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


class ExactReferences:
    """Each (dataset, task)'s exact Q on its whole grid, the stationary density of its data on the
    metric's grid and, for control, the judge of greedy policies (greedy.GreedyJudge), built once for
    all the runs that share them."""

    def __init__(self, entries: list[dict], gamma: float):
        self.entries = {}
        for entry in entries:
            if set(entry) != EXACT_ENTRY_KEYS:
                raise InputError(f"--exact: each row needs exactly the keys {sorted(EXACT_ENTRY_KEYS)}, got {sorted(entry)}")
            self.entries[entry["dataset"], entry["task"]] = entry
        self.gamma = gamma
        self.solved = {}

    def __getitem__(self, key: tuple[str, str]):
        if key not in self.entries:
            raise InputError(f"--exact: no exact Q given for dataset {key[0]!r}, task {key[1]!r}")
        if key not in self.solved:
            entry = self.entries[key]
            exact = load_exact(entry["exact"], None)
            dynamics = build(Dynamics, entry["dynamics"], "config 'problem.dynamics'")
            judge = GreedyJudge.build(exact, self.gamma, dynamics) if key[1] == "control" else None
            self.solved[key] = exact, judge, load_density(entry["density"], GRID_POINTS)
        return self.solved[key]


def final_exact_scores(table: pd.DataFrame, networks: list[Path], references: ExactReferences) -> pd.DataFrame:
    """The table with each run's final network measured against the exact Q (EXACT_SCORES appended);
    networks[i] is the network of table row i."""
    scores = []
    for (_, row), network in zip(table.iterrows(), networks, strict=True):
        exact, judge, density = references[row["dataset"], row["task"]]
        scores.append(exact_scores(load_network(network, "a run's network"), exact, judge, density))
    return pd.concat([table, pd.DataFrame({f"final_{name}": [s[name] for s in scores] for name in scores[0]},
                                          index=table.index)], axis=1)


def summary_stats(table: pd.DataFrame) -> pd.DataFrame:
    """One row per group: each final error's statistics over the group's seeds."""
    rows = []
    for group, runs in table.groupby(GROUP, sort=True):
        row = {**dict(zip(GROUP, group)), "n": len(runs)}
        names = None  # the statistics' names, from the first column (final_rel_error, never empty)
        for column in FINALS:
            if runs[column].isna().all():  # a column that does not apply to the group (greedy, evaluation)
                row |= {f"{column}_{name}": None for name in names}
                continue
            stats = seed_summary(runs[column].to_numpy())
            names = names or [name for name in stats if name != "n"]
            row |= {f"{column}_{name}": stats[name] for name in names}
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--curves", nargs="+", required=True, help="errors.csv of every run, its q.pt beside it")
    p.add_argument("--exact", type=json_arg, required=True,
                   help='JSON {"rows": [{"dataset", "task", "exact": q_exact.npy, "dynamics": sde.Dynamics, '
                        '"density": stationary_density.npy}, ...]}: the exact Q each dataset and task\'s runs are '
                        "measured against, and where their data are")
    p.config_option("--problem", "problem", type=json_arg,
                    help="JSON of the problem (sde.Problem); its gamma is every run's discount, each row gives its dataset's dynamics")
    p.add_argument("--converged-below", type=finite_float, required=True,
                   help="a run counts as converged when its final e_k/e_0 is at most this")
    p.add_argument("--out", required=True, help="the per-run table (csv)")
    p.add_argument("--stats-out", required=True, help="the per-group table over seeds (csv)")
    args = p.parse_args()
    gamma = Problem.from_config(args.problem, "--problem").gamma
    ensure_writable_paths(args.out, args.stats_out)  # both, before either is written
    loaded = load_error_curves(args.curves)
    table = summarise(pd.concat(loaded), args.converged_below)
    network_of = {tuple(curve[KEYS].iloc[0]): Path(path).parent / "q.pt" for path, curve in zip(args.curves, loaded)}
    networks = [network_of[tuple(row)] for row in table[KEYS].itertuples(index=False)]
    table = final_exact_scores(table, networks, ExactReferences(args.exact.get("rows", []), gamma))
    stats = summary_stats(table)
    print(table.to_string(index=False))
    print(stats.to_string(index=False))
    exact_files = {f"{kind} {e['dataset']} {e['task']}": e[kind] for e in args.exact.get("rows", [])
                   for kind in ("exact", "density")}
    record = provenance({"converged_below": args.converged_below, "gamma": gamma, "exact": args.exact}, None,
                        {path: path for path in [*args.curves, *map(str, networks)]} | exact_files)
    save_csv(args.out, table, record)
    save_csv(args.stats_out, stats, record)


if __name__ == "__main__":
    run(main)
