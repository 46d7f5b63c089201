"""CBO against SGD at equal cost, as a table: results/cost.csv, one row per run of the study (dataset,
task, setting, estimator, seed), with the network evaluations it spent until its e_k/e_0 first
reached the bound (`evaluations_to_bound` against the learned Q*, `evaluations_to_bound_exact`
against the exact Q; inf when it never did), the evaluations of the whole run and its final errors.
Evaluation counts are exact, so the table repeats byte for byte (wall times are not in it: they are
measurements, drawn in figures/*/cost_seconds)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rlstudy.bellman.results.error_curves import RUN_KEYS, load_error_curves
from rlstudy.core.cli import finite_float, parser, run
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import provenance


def evaluations_to(curve: pd.DataFrame, column: str, bound: float) -> float:
    """The evaluations spent when `column` first reached `bound` (inf: never)."""
    reached = np.flatnonzero(curve[column].to_numpy() <= bound)
    return float(curve["evaluations"].iloc[reached[0]]) if len(reached) else math.inf


def cost_row(curve: pd.DataFrame, bound: float) -> dict:
    return {**curve[RUN_KEYS].iloc[0].to_dict(), "bound": bound,
            "evaluations_to_bound": evaluations_to(curve, "rel_error", bound),
            "evaluations_to_bound_exact": evaluations_to(curve, "rel_error_exact", bound),
            "evaluations": int(curve["evaluations"].iloc[-1]),
            "final_rel_error": float(curve["rel_error"].iloc[-1]),
            "final_rel_error_exact": float(curve["rel_error_exact"].iloc[-1])}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--curves", nargs="+", required=True, help="errors.csv of every run")
    p.add_argument("--bound", type=finite_float, required=True, help="the e_k/e_0 to reach (config summary.converged_below)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    table = pd.DataFrame([cost_row(curve, args.bound) for curve in load_error_curves(args.curves)])
    table = table.sort_values(RUN_KEYS, ignore_index=True)
    print(table.to_string(index=False))
    save_csv(args.out, table, provenance({"bound": args.bound}, None, {path: path for path in args.curves}))


if __name__ == "__main__":
    run(main)
