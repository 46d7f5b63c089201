"""Render the CBO sweep's heatmaps from its table."""

from __future__ import annotations

from rlstudy.bellman.figures.sweep import plot_sweep_figure
from rlstudy.core.cli import finite_float, parser, run
from rlstudy.core.loaders import load_csv
from rlstudy.plotting import style


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--table", required=True, help="results/sweep/cbo_sweep.csv")
    p.add_argument("--converged-below", type=finite_float, required=True)
    style.add_output_options(p)
    args = p.parse_args()
    table = load_csv(args.table, "sweep table", columns=["grid", "x", "x_value", "y", "y_value", "task", "estimator",
                                                         "seed", "iterations", "final_rel_error", "diverged"])
    first = table.iloc[0]
    title = (f"CBO sweep, Q-{first['task']} {first['estimator']}, {table['seed'].nunique()} seed(s), "
             f"{int(first['iterations'])} steps at the base")
    style.save(plot_sweep_figure(table, args.converged_below, title), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
