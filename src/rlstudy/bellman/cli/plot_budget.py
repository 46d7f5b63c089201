"""Draw one task's error budget (results/budget/budget.csv): per estimator, a bar for the minimiser of
its population residual and one for the minimiser of its sampled residual on the study's data, with
each optimiser's final runs beside them (the median over seeds, the bar from min to max); the
network's reach (its regression to the exact Q) is the dashed line. Log scale: the parts span orders of
magnitude. A part whose loss still moved when its fit stopped is hatched."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rlstudy.bellman.problem.sde import TASKS  # noqa: E402
from rlstudy.core.cli import parser, run  # noqa: E402
from rlstudy.core.errors import InputError  # noqa: E402
from rlstudy.core.loaders import load_csv  # noqa: E402
from rlstudy.plotting import style  # noqa: E402

ERROR = "error_exact_normalised"
PARTS = {"population": "population minimiser", "finite_data": "finite-data minimiser"}


def plot_budget(table, task: str):
    style.setup()
    rows = table[table["task"] == task]
    if rows.empty:
        raise InputError(f"the budget table holds no row of task {task!r}")
    methods = [m for m in dict.fromkeys(rows["estimator"]) if m != "any"]
    optimisers = sorted(set(rows.loc[rows["part"] == "optimiser", "setting"].dropna()))
    slots = [*PARTS, *optimisers]
    width = 0.8 / len(slots)
    fig, ax = plt.subplots(figsize=(1.6 + 1.6 * len(methods), 4.2))
    colours = style.palette(slots)
    labelled = set()  # one legend entry per slot, on its first bar
    for k, slot in enumerate(slots):
        x = np.arange(len(methods)) + (k - (len(slots) - 1) / 2) * width
        for i, method in enumerate(methods):
            if slot in PARTS:
                hit = rows[(rows["part"] == slot) & (rows["estimator"] == method)]
            else:
                hit = rows[(rows["part"] == "optimiser") & (rows["estimator"] == method) & (rows["setting"] == slot)]
            if hit.empty:
                continue
            row = hit.iloc[0]
            label = None if slot in labelled else PARTS.get(slot, f"{slot} (median of runs)")
            labelled.add(slot)
            hatch = "//" if slot in PARTS and not bool(row["converged"]) else None
            ax.bar(x[i], row[ERROR], width, color=colours[slot], hatch=hatch, label=label, edgecolor="black", linewidth=0.4)
            if slot not in PARTS:
                ax.vlines(x[i], row[f"{ERROR}_min"], row[f"{ERROR}_max"], color="black", linewidth=1)
    reach = rows[rows["part"] == "reach"]
    if not reach.empty:
        ax.axhline(reach.iloc[0][ERROR], color="black", linestyle="--", linewidth=1, label="reach (regression to exact Q)")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(methods)), methods)
    ax.set_ylabel("centred error / exact Q's norm")
    ax.set_title(f"Error budget, {task}: each part's distance to the exact Q")
    fig.tight_layout()
    style.legend_below(fig, *ax.get_legend_handles_labels(), ncol=2)
    return fig


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--table", required=True, help="results/budget/budget.csv")
    p.add_argument("--task", choices=TASKS, required=True)
    style.add_output_options(p)
    args = p.parse_args()
    table = load_csv(args.table, "the error budget", columns=("task", "part", "estimator", "setting", ERROR),
                     finite=(ERROR,))
    style.save(plot_budget(table, args.task), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
