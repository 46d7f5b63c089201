"""CBO against SGD at equal cost, from the runs of one dataset: e_k/e_0 against network evaluations
(deterministic) or against wall time (measured: this figure differs between reruns)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.bellman.figures.cost import AXES, plot_cost_figure
from rlstudy.core.cli import parser, run
from rlstudy.core.io import load_csv
from rlstudy.plotting import style


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--cost", choices=sorted(AXES), required=True)
    p.add_argument("--runs", nargs="+", required=True, help="run folders with errors.csv (and wall_time.csv)")
    p.add_argument("--out-prefix", required=True)
    p.add_argument("--formats", nargs="+", default=["png", "pdf"])
    p.add_argument("--dpi", type=int, default=150)
    args = p.parse_args()
    curves = []
    for folder in args.runs:
        curve = load_csv(Path(folder) / "errors.csv", "error curve")
        if args.cost == "seconds":
            curve["seconds"] = load_csv(Path(folder) / "wall_time.csv", "wall time")["seconds"].to_numpy()
        curves.append(curve)
    curves = pd.concat(curves, ignore_index=True)
    data = style.DATASET_NAMES[curves["dataset"].iloc[0]]
    title = f"CBO and SGD at equal cost on {data} (mean over seeds, band min-max)"
    style.save(plot_cost_figure(curves, args.cost, title), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
