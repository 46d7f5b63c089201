"""Render the three-panel Q figure of one task and optimiser from its runs (PNG and PDF)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pandas as pd

from rlstudy.bellman.error_curves import load_error_curves
from rlstudy.bellman.exact import load_exact
from rlstudy.bellman.figures.q import plot_q_figure
from rlstudy.bellman.qnet import load_network
from rlstudy.bellman.residuals import TASKS
from rlstudy.core.cli import finite_float, integer_from, parser, run
from rlstudy.plotting import style

EXACT_POINTS_DRAWN = 200  # every grid solve_exact writes has a multiple of 100 points, doubled at least once


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--setting", required=True, help="the optimiser setting's name (sgd, cbo, cbo-adaptive, ...)")
    p.add_argument("--reference", required=True, help="the learned Q* state dict (.pt)")
    p.add_argument("--exact", required=True, help="the task's exact Q (q_exact.npy)")
    p.add_argument("--reference-note", default="", help="how Q* was made, for the title")
    p.add_argument("--runs", nargs="+", required=True, help="run folders, each with q.pt and errors.csv")
    p.add_argument("--converged-below", type=finite_float, default=0.5)
    p.add_argument("--out-prefix", required=True)
    p.add_argument("--formats", nargs="+", default=["png", "pdf"])
    p.add_argument("--dpi", type=integer_from(1), default=150)
    args = p.parse_args()
    folders = sorted(args.runs)
    curves, networks = load_error_curves([Path(folder) / "errors.csv" for folder in folders]), defaultdict(list)
    for folder, curve in zip(folders, curves):
        networks[curve["method"].iloc[0]].append(load_network(Path(folder) / "q.pt", "a run's network"))
    data = style.DATASET_NAMES[curves[0]["dataset"].iloc[0]]
    title = (f"Q-{args.task}, {args.setting.upper()} on {data}"
             + (f"; {args.reference_note}" if args.reference_note else ""))
    exact = load_exact(args.exact, EXACT_POINTS_DRAWN)
    fig = plot_q_figure(load_network(args.reference, "reference Q*"), exact, dict(networks), pd.concat(curves),
                        title, args.converged_below)
    style.save(fig, args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
