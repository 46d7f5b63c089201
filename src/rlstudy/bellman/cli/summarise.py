"""Collect every run's error curve into results/summary.csv, one row per run."""

from __future__ import annotations

import pandas as pd

from rlstudy.bellman.curves import RUN_KEYS as KEYS
from rlstudy.bellman.curves import load_error_curves
from rlstudy.core.cli import finite_float, parser, run
from rlstudy.core.io import provenance, save_csv


def summarise(curves: pd.DataFrame, converged_below: float) -> pd.DataFrame:
    rows = curves.groupby(KEYS, sort=True).agg(iterations=("iteration", "max"),
                                               final_rel_error=("rel_error", "last"),
                                               min_rel_error=("rel_error", "min"),
                                               evaluations=("evaluations", "last")).reset_index()
    rows["converged"] = rows["final_rel_error"] <= converged_below
    return rows


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--curves", nargs="+", required=True, help="errors.csv of every run")
    p.add_argument("--converged-below", type=finite_float, required=True,
                   help="a run counts as converged when its final e_k/e_0 is at most this")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    curves = pd.concat(load_error_curves(args.curves))
    table = summarise(curves, args.converged_below)
    print(table.to_string(index=False))
    save_csv(args.out, table, provenance({"converged_below": args.converged_below}, None,
                                         {path: path for path in args.curves}))


if __name__ == "__main__":
    run(main)
