"""The error budget's table (results/budget/budget.csv): each task's parts, one row per part and
estimator (column `estimator`), each measured by its own experiment:

    reach        the network fitted to the exact Q (estimator "any": it has no estimator)
    population   the minimiser of the estimator's residual in expectation
    finite_data  the minimiser of its sampled residual on the study's trajectory
    optimiser    the study's final runs on our data (results/summary.csv), one row per optimiser setting
                 (column `setting`): the median over seeds of final_error_exact_normalised, with the
                 min and max, and the median of final_rel_error_exact (e_k/e_0)

error_exact_normalised is the centred error against the exact Q over the exact Q's own norm (0: exact,
1: as far off as a flat Q), as summarise measures every run; with --weights (task=path.npy) also
error_exact_normalised_weighted, the same metric with the states weighted (for the runs, from each
run's q.pt). ds_population_error_exact_normalised repeats the task's DS population error on every row
of the task, so that a claim can compare a row with it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rlstudy.bellman.budget import load_weights, scores
from rlstudy.bellman.exact import load_exact
from rlstudy.bellman.qnet import load_network
from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.io import ensure_writable_paths, load_csv, provenance, save_csv

PART_COLUMNS = ("task", "estimator", "part", "error_exact_normalised", "final_loss", "iterations", "converged")
ERROR = "error_exact_normalised"
WEIGHTED = "error_exact_normalised_weighted"


def pairs(values: list[str] | None, option: str) -> dict[str, str]:
    result = {}
    for pair in values or []:
        task, sep, path = pair.partition("=")
        if not sep or not task or not path:
            raise InputError(f"{option}: expected task=path, got {pair!r}")
        result[task] = path
    return result


def optimiser_rows(summary: pd.DataFrame, tasks: list[str], runs_root: str, exact: dict, weights: dict) -> pd.DataFrame:
    ours = summary[(summary["dataset"] == "ours") & summary["task"].isin(tasks)].copy()
    if weights:
        weighted = []
        for row in ours.itertuples():
            folder = Path(runs_root) / "ours" / row.task / row.setting / row.estimator / f"seed{row.seed}"
            theta = load_network(folder / "q.pt", "a run's network")
            weighted.append(scores(theta, exact[row.task], weights[row.task])[WEIGHTED])
        ours[WEIGHTED] = weighted
    agg = {ERROR: ("final_error_exact_normalised", "median"), f"{ERROR}_min": ("final_error_exact_normalised", "min"),
           f"{ERROR}_max": ("final_error_exact_normalised", "max"),
           "final_rel_error_exact": ("final_rel_error_exact", "median"), "runs": ("seed", "count")}
    if weights:
        agg[WEIGHTED] = (WEIGHTED, "median")
    rows = ours.groupby(["task", "estimator", "setting"], sort=True).agg(**agg).reset_index()
    rows["part"] = "optimiser"
    return rows


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--parts", nargs="+", required=True, help="error.csv of every fitted part (reach, population, finite_data)")
    p.add_argument("--summary", required=True, help="results/summary.csv (the runs' final errors)")
    p.add_argument("--exact", nargs="+", required=True, help="task=q_exact.npy of each task")
    p.add_argument("--weights", nargs="*", default=[], help="task=weights.npy of each task (weighted metric)")
    p.add_argument("--runs-root", default="results/runs", help="the run folders (their q.pt, for the weighted metric)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    ensure_writable_paths(args.out)
    exact = {task: load_exact(path, None) for task, path in pairs(args.exact, "--exact").items()}
    weights = {task: load_weights(path) for task, path in pairs(args.weights, "--weights").items()}
    if weights and set(weights) != set(exact):
        raise InputError(f"--weights: give weights for every task of --exact ({sorted(exact)}), or none; "
                         f"got {sorted(weights)}")
    parts = pd.concat([load_csv(path, "a budget part's error", columns=PART_COLUMNS, finite=(ERROR, "final_loss"))
                       for path in args.parts], ignore_index=True)
    if weights and WEIGHTED not in parts.columns:
        raise InputError(f"--weights given, but the parts carry no {WEIGHTED}: rerun them with their weights")
    unknown = sorted(set(parts["task"]) - set(exact))
    if unknown:
        raise InputError(f"--parts: tasks {unknown} have no --exact")
    summary = load_csv(args.summary, "the runs' summary", columns=("dataset", "task", "setting", "estimator", "seed"),
                       finite=("final_error_exact_normalised", "final_rel_error_exact"))
    optimisers = optimiser_rows(summary, sorted(exact), args.runs_root, exact, weights)
    table = pd.concat([parts, optimisers], ignore_index=True)
    table["setting"] = table["setting"].fillna("") if "setting" in table else ""
    ds = parts[(parts["part"] == "population") & (parts["estimator"] == "DS")].set_index("task")[ERROR]
    table["ds_population_error_exact_normalised"] = table["task"].map(ds)
    order = {part: i for i, part in enumerate(("reach", "population", "finite_data", "optimiser"))}
    table = table.sort_values(["task", "part", "estimator", "setting"], key=lambda c: c.map(order) if c.name == "part"
                              else c, kind="stable").reset_index(drop=True)
    first = ["task", "part", "estimator", "setting", ERROR, *([WEIGHTED] if weights else [])]
    table = table[first + [c for c in table.columns if c not in first]]
    if not np.isfinite(table[ERROR].to_numpy(dtype=float)).all():
        raise InputError("an error of the budget is not finite")
    print(table.to_string(index=False))
    record = provenance({"tasks": sorted(exact), "weights": pairs(args.weights, "--weights") or "uniform"}, None,
                        {**{f"part{i}": path for i, path in enumerate(args.parts)}, "summary": args.summary,
                         **{f"exact_{t}": path for t, path in pairs(args.exact, "--exact").items()},
                         **{f"weights_{t}": path for t, path in pairs(args.weights, "--weights").items()}})
    save_csv(args.out, table, record)


if __name__ == "__main__":
    run(main)
