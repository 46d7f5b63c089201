"""Render one dataset and task's final errors against the exact Q by Fourier mode (PNG and PDF):
each setting and estimator's median over seeds with its min-max band, from results/fourier_error.csv
(cli/fourier_error.py), and the exact Bellman step's contraction of each mode for reference."""

from __future__ import annotations

from rlstudy.bellman.figures.fourier import plot_fourier_error_figure
from rlstudy.bellman.problem.sde import TASKS
from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv
from rlstudy.plotting import style

COLUMNS = ["dataset", "task", "setting", "estimator", "seed", "mode"]


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--table", required=True, help="results/fourier_error.csv")
    p.add_argument("--dataset", required=True)
    p.add_argument("--task", choices=TASKS, required=True)
    style.add_output_options(p)
    args = p.parse_args()
    table = load_csv(args.table, "errors by Fourier mode", columns=COLUMNS,
                     finite=["error_normalised", "bellman_contraction"])
    rows = table[(table["dataset"] == args.dataset) & (table["task"] == args.task)]
    if rows.empty:
        raise InputError(f"{args.table}: no rows of dataset {args.dataset!r}, task {args.task!r}")
    data = style.DATASET_NAMES.get(args.dataset, args.dataset)
    title = f"Q-{args.task} on {data}: final error against the exact Q by Fourier mode"
    style.save(plot_fourier_error_figure(rows, title), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
