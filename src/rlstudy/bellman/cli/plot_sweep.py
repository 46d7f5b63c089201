"""Render the CBO sweep's heatmaps from its table."""

from __future__ import annotations

from rlstudy.bellman.figures.sweep import plot_sweep_figure
from rlstudy.core.cli import parser, run
from rlstudy.core.io import load_csv
from rlstudy.plotting import style


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--table", required=True, help="results/sweep/cbo_sweep.csv")
    p.add_argument("--converged-below", type=float, required=True)
    p.add_argument("--out-prefix", required=True)
    p.add_argument("--formats", nargs="+", default=["png", "pdf"])
    p.add_argument("--dpi", type=int, default=150)
    args = p.parse_args()
    table = load_csv(args.table, "sweep table")
    first = table.iloc[0]
    title = (f"CBO sweep, Q-{first['task']} {first['method']}, {table['seed'].nunique()} seed(s), "
             f"{int(first['iterations'])} steps at the base")
    style.save(plot_sweep_figure(table, args.converged_below, title), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
