"""Collect the CBO sweep's runs into one tidy table: one row per run, every CBO parameter a column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rlstudy.bellman.results.error_curves import load_error_curve
from rlstudy.bellman.learners.sweep import sweep_points
from rlstudy.core.cli import finite_float, json_arg, parser, run
from rlstudy.core.errors import InputError, first_line
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import check_recorded_run, provenance


def run_identity(sweep: dict, point, seed: int) -> dict:
    """What the record of a sweep run's errors.csv must say: this task, estimator and seed, and every
    CBO parameter of this point (a run copied or moved to another point's folder is refused)."""
    return {"parameters.setting": "cbo-sweep", "parameters.task": sweep["task"],
            "parameters.estimator": sweep["estimator"], "parameters.seed": seed,
            **{f"parameters.params.{name}": value for name, value in point.params.items()}}


def sweep_table(sweep: dict, results_dir: Path, converged_below: float) -> tuple[pd.DataFrame, dict]:
    """One row per run; each run's record must name its point's parameters, so every row is a run
    that was made with the values it shows (sweep_points refuses two points sharing a folder)."""
    rows, inputs = [], {}
    try:
        points = sweep_points(sweep)
    except (ValueError, KeyError, TypeError, AttributeError) as err:  # a --sweep JSON given by hand
        raise InputError(f"--sweep: not a valid config 'cbo_sweep' ({first_line(err)})") from err
    for point in points:
        for seed in sweep["seeds"]:
            path = results_dir / point.grid / point.label / f"seed{seed}" / "errors.csv"
            check_recorded_run(path, "sweep error curve", run_identity(sweep, point, seed))
            curve = load_error_curve(path, "sweep error curve", columns=["diverged"])
            inputs[str(path)] = path
            diverged = bool(curve["diverged"].iloc[-1])
            final = np.inf if diverged else float(curve["rel_error"].iloc[-1])
            rows.append({"grid": point.grid, "x": point.x, "x_value": point.x_value, "y": point.y,
                         "y_value": point.y_value, "task": sweep["task"], "estimator": sweep["estimator"], "seed": seed,
                         **point.params, "iterations": int(curve["iteration"].iloc[-1]),
                         "evaluations": int(curve["evaluations"].iloc[-1]), "final_rel_error": final,
                         "min_rel_error": float(curve["rel_error"].min()), "diverged": diverged,
                         "converged": (not diverged) and final <= converged_below})
    return pd.DataFrame(rows), inputs


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--sweep", type=json_arg, required=True, help="JSON of config 'cbo_sweep'")
    p.add_argument("--results-dir", type=Path, required=True, help="results/sweep")
    p.add_argument("--converged-below", type=finite_float, required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    table, inputs = sweep_table(args.sweep, args.results_dir, args.converged_below)
    print(table[["grid", "x", "x_value", "y", "y_value", "seed", "final_rel_error", "converged"]].to_string(index=False))
    save_csv(args.out, table, provenance({"cbo_sweep": args.sweep, "converged_below": args.converged_below},
                                         None, inputs))


if __name__ == "__main__":
    run(main)
