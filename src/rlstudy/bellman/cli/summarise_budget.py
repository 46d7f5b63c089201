"""The error budget's table (results/budget/budget.csv): each task's parts, one row per part and
estimator (column `estimator`), each measured by its own experiment:

    reach        the network fitted to the exact Q (estimator "any": it has no estimator)
    reach_weighted  the same fit with the states weighted as the residual fits weigh them (when they are)
    population   the minimiser of the estimator's residual in expectation
    finite_data  the minimiser of its sampled residual on the study's trajectory
    optimiser    the study's final runs on our data (results/summary.csv), one row per optimiser setting
                 (column `setting`): the median over seeds of final_error_exact_normalised, with the
                 min and max, and the median of final_rel_error_exact (e_k/e_0)

error_exact_normalised is the centred error against the exact Q over the exact Q's own norm (0: exact,
1: as far off as a flat Q), as summarise measures every run; when the parts were fitted with weights,
also error_exact_weighted_normalised, the same metric with the states weighted by the stationary
density (for the runs, summary.csv's final_error_exact_weighted_normalised). ds_population_error_exact_normalised repeats the task's DS population error on every row
of the task, so that a claim can compare a row with it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import ensure_writable_paths, save_csv
from rlstudy.core.loaders import load_csv
from rlstudy.core.provenance import provenance

PARTS = ("reach", "reach_weighted", "population", "finite_data", "optimiser")  # the table's order
PART_COLUMNS = ("task", "estimator", "part", "error_exact_normalised", "final_loss", "iterations", "converged")
ERROR = "error_exact_normalised"
WEIGHTED = "error_exact_weighted_normalised"


def optimiser_rows(summary: pd.DataFrame, tasks: list[str], weighted: bool) -> pd.DataFrame:
    """The runs on our data, one row per task, estimator and setting: medians over seeds (summarise
    measured every run, weighted by the same stationary density as the parts' fits)."""
    ours = summary[(summary["dataset"] == "ours") & summary["task"].isin(tasks)]
    agg = {ERROR: ("final_error_exact_normalised", "median"), f"{ERROR}_min": ("final_error_exact_normalised", "min"),
           f"{ERROR}_max": ("final_error_exact_normalised", "max"),
           "final_rel_error_exact": ("final_rel_error_exact", "median"), "runs": ("seed", "count")}
    if weighted:
        agg[WEIGHTED] = (f"final_{WEIGHTED}", "median")
    rows = ours.groupby(["task", "estimator", "setting"], sort=True).agg(**agg).reset_index()
    rows["part"] = "optimiser"
    return rows


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--parts", nargs="+", required=True, help="error.csv of every fitted part (reach, population, finite_data)")
    p.add_argument("--summary", required=True, help="results/summary.csv (the runs' final errors)")
    p.add_argument("--tasks", nargs="+", required=True, help="the tasks of the budget")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    ensure_writable_paths(args.out)
    tasks = sorted(args.tasks)
    parts = pd.concat([load_csv(path, "a budget part's error", columns=PART_COLUMNS, finite=(ERROR, "final_loss"))
                       for path in args.parts], ignore_index=True)
    weighted = WEIGHTED in parts.columns
    if weighted and parts[WEIGHTED].isna().any():
        raise InputError(f"--parts: some parts carry {WEIGHTED} and some do not; rerun them with one weighting")
    unknown = sorted(set(parts["task"]) - set(tasks))
    if unknown:
        raise InputError(f"--parts: tasks {unknown} are not among --tasks {tasks}")
    summary = load_csv(args.summary, "the runs' summary", columns=("dataset", "task", "setting", "estimator", "seed"),
                       finite=("final_error_exact_normalised", "final_rel_error_exact",
                               *([f"final_{WEIGHTED}"] if weighted else [])))
    optimisers = optimiser_rows(summary, tasks, weighted)
    table = pd.concat([parts, optimisers], ignore_index=True)
    table["setting"] = table["setting"].fillna("") if "setting" in table else ""
    ds = parts[(parts["part"] == "population") & (parts["estimator"] == "DS")].set_index("task")[ERROR]
    table["ds_population_error_exact_normalised"] = table["task"].map(ds)
    order = {part: i for i, part in enumerate(PARTS)}
    table = table.sort_values(["task", "part", "estimator", "setting"], key=lambda c: c.map(order) if c.name == "part"
                              else c, kind="stable").reset_index(drop=True)
    first = ["task", "part", "estimator", "setting", ERROR, *([WEIGHTED] if weighted else [])]
    table = table[first + [c for c in table.columns if c not in first]]
    if not np.isfinite(table[ERROR].to_numpy(dtype=float)).all():
        raise InputError("an error of the budget is not finite")
    print(table.to_string(index=False))
    record = provenance({"tasks": tasks, "weighted": weighted}, None,
                        {**{f"part{i}": path for i, path in enumerate(args.parts)}, "summary": args.summary})
    save_csv(args.out, table, record)


if __name__ == "__main__":
    run(main)
