"""The optimisers (CBO against SGD) at equal cost, from the runs of one dataset: e_k/e_0 against network evaluations
(deterministic) or against wall time (measured: this figure differs between reruns)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.bellman.results.error_curves import load_error_curves, load_wall_time
from rlstudy.bellman.figures.cost import AXES, plot_cost_figure
from rlstudy.core.cli import parser, run
from rlstudy.plotting import style


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--cost", choices=sorted(AXES), required=True)
    p.add_argument("--runs", nargs="+", required=True, help="run folders with errors.csv (and wall_time.csv)")
    p.add_argument("--optimizers", nargs="+", required=True, help="the optimisers whose settings made the runs")
    style.add_output_options(p)
    args = p.parse_args()
    curves = load_error_curves([Path(folder) / "errors.csv" for folder in args.runs])
    if args.cost == "seconds":
        for folder, curve in zip(args.runs, curves):
            curve["seconds"] = load_wall_time(Path(folder) / "wall_time.csv", curve)
    curves = pd.concat(curves, ignore_index=True)
    data = style.DATASET_NAMES[curves["dataset"].iloc[0]]
    names = sorted(name.upper() for name in set(args.optimizers))
    title = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
    title += f" at equal cost on {data} (mean over seeds, band min-max)"
    style.save(plot_cost_figure(curves, args.cost, title), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
