"""Heatmaps of the CBO sweep: final e_k/e_0 (mean over seeds) for each pair of parameter values."""

from __future__ import annotations

import math

import pandas as pd
from matplotlib.patches import Patch

from rlstudy.bellman.learners.sweep import format_value
from rlstudy.plotting import style


def tick_label(value) -> str:
    """A grid value as in the config; the table's value columns mix numbers and names, so a CSV
    round trip may hand numbers back as text ("0.0")."""
    try:
        return format_value(float(value))
    except ValueError:
        return str(value)


def grid_matrix(runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(mean final e_k/e_0, annotation) with rows y_value and columns x_value in config order.

    A cell where any seed diverged has no mean (no colour) and reads DIVERGED; a pair of values the table has no
    run of reads NO_RUN."""
    x_order = list(dict.fromkeys(runs["x_value"]))
    y_order = list(dict.fromkeys(runs["y_value"]))
    cells = runs.groupby(["y_value", "x_value"], sort=False).agg(
        final=("final_rel_error", "mean"), diverged=("diverged", "any"))
    final = cells["final"].where(~cells["diverged"]).unstack("x_value").reindex(index=y_order, columns=x_order)
    text = cells["final"].map(lambda v: f"{v:.2f}").where(~cells["diverged"], DIVERGED)
    text = text.unstack("x_value").reindex(index=y_order, columns=x_order).fillna(NO_RUN)
    return final, text


DIVERGED, NO_RUN = "div", "no run"
GREY = "0.6"  # the cells without a mean
GREY_MEANS = f"grey: no mean ({DIVERGED}: a seed diverged, its losses or particles not finite; {NO_RUN}: not run)"


def plot_sweep_figure(table: pd.DataFrame, converged_below: float, title: str):
    style.setup()
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.colors import LogNorm

    grids = list(dict.fromkeys(table["grid"]))
    # At most three panels a row: a row of five is a strip too thin to read at a page's width.
    n_cols = min(3, len(grids))
    n_rows = math.ceil(len(grids) / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.6 * n_cols, 4.0 * n_rows), squeeze=False)
    for ax in axes.flat[len(grids):]:
        ax.set_visible(False)
    # One colour scale for all panels, centred (white) at the convergence threshold.
    norm = LogNorm(vmin=converged_below / 5, vmax=converged_below * 5)
    last = axes.flat[len(grids) - 1]
    for ax, grid in zip(axes.flat, grids):
        runs = table[table["grid"] == grid]
        final, text = grid_matrix(runs)
        sns.heatmap(final.astype(float).clip(norm.vmin, norm.vmax), annot=text.to_numpy(), fmt="", cmap="RdBu_r",
                    norm=norm, cbar=ax is last, ax=ax, linewidths=0.5, linecolor="white",
                    cbar_kws={"label": "final $e_k/e_0$ (mean over seeds)"})
        ax.set_facecolor(GREY)
        # seaborn writes no annotation in a cell without a value: the grey cells' words are written here
        for i, j in zip(*final.isna().to_numpy().nonzero()):
            ax.text(j + 0.5, i + 0.5, text.iat[i, j], ha="center", va="center", color="black")
        ax.set_xticklabels([tick_label(v) for v in final.columns])
        ax.set_yticklabels([tick_label(v) for v in final.index], rotation=0)
        ax.set(xlabel=runs["x"].iloc[0], ylabel=runs["y"].iloc[0], title=grid)
    fig.suptitle(title + f"; blue: converged ($\\leq {converged_below:g}$)")
    fig.tight_layout()
    style.legend_below(fig, [Patch(facecolor=GREY, edgecolor="white")], [GREY_MEANS])
    return fig
