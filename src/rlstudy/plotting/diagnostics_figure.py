"""The diagnostics figure every learner shares: one panel per column of its diagnostics.csv
(docs/diagnostics.md), every run overlaid in its own colour, a failing run dashed and named so in
the legend."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlstudy.plotting import style

import matplotlib.pyplot as plt  # noqa: E402  (after plotting.style chose the Agg backend)

# Columns drawn on a log scale when all their finite values are positive and span a decade or more.
LOG_SCALE_PREFIXES = ("loss_", "grad_norm", "beta", "temperature", "alpha_", "kl_")
PANELS_PER_ROW = 4


@dataclass(frozen=True)
class DiagnosticsRun:
    label: str              # the legend's name of the run, e.g. "seed0 149.4 FAILS (< 475)"
    frame: pd.DataFrame     # its diagnostics.csv
    failing: bool = False   # drawn dashed


def columns_of(runs: Sequence[DiagnosticsRun], x: str) -> list[str]:
    """Every diagnostic column of the runs, in the order of their files (x excluded)."""
    return list(dict.fromkeys(c for run in runs for c in run.frame.columns if c != x))


def _log_scale(column: str, values: list[np.ndarray]) -> bool:
    finite = np.concatenate([v[np.isfinite(v)] for v in values]) if values else np.array([])
    return (column.startswith(LOG_SCALE_PREFIXES) and finite.size > 0 and bool((finite > 0).all())
            and finite.max() >= 10 * finite.min())


def diagnostics_figure(runs: Sequence[DiagnosticsRun], x: str, x_label: str, title: str,
                       bounds: Mapping[str, float] | None = None) -> plt.Figure:
    """One panel per diagnostic column against `x`, the runs overlaid; `bounds` draws a dashed
    grey line at a column's bound (e.g. a KL constraint)."""
    if not runs:
        raise ValueError("diagnostics_figure needs at least one run")
    style.setup()
    columns = columns_of(runs, x)
    # Balanced rows, two at least past three panels: one row of four is a strip too thin to read.
    n_rows = 1 if len(columns) <= 3 else max(2, math.ceil(len(columns) / PANELS_PER_ROW))
    n_cols = math.ceil(len(columns) / n_rows)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.3 * n_cols, 2.4 * n_rows + 0.9), sharex=True,
                             squeeze=False)
    for ax, column in zip(axes.flat, columns):
        values = []
        for i, run in enumerate(runs):
            if column not in run.frame:
                continue
            y = run.frame[column].to_numpy(dtype=float)
            values.append(y)
            ax.plot(run.frame[x], y, color=f"C{i}", label=run.label,
                    **(dict(linestyle="--", linewidth=1.8, zorder=3) if run.failing else dict(linewidth=1.2)))
        if bounds and column in bounds:
            ax.axhline(bounds[column], color="0.4", linestyle=":", linewidth=1)
        ax.set_title(column, fontsize="small")
        ax.set_yscale("log" if _log_scale(column, values) else "linear")
        ax.tick_params(labelsize="x-small")
    for ax in axes.flat[len(columns):]:
        ax.set_visible(False)
    for ax in axes.flat[max(0, len(columns) - n_cols):len(columns)]:  # the lowest panel of each column
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel(x_label, fontsize="small")
    legend = {}
    for ax in axes.flat[:len(columns)]:
        legend |= {label: handle for handle, label in zip(*ax.get_legend_handles_labels()) if label not in legend}
    fig.legend(list(legend.values()), list(legend), loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(legend), 3), fontsize="small", title="dashed: failing run", title_fontsize="small")
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    return fig
