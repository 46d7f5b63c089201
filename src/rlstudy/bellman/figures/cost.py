"""CBO against SGD at equal cost: e_k/e_0 against network evaluations or wall time, same axes."""

from __future__ import annotations

import pandas as pd

from rlstudy.bellman.figures import ESTIMATOR_COLOURS
from rlstudy.plotting import style

AXES = {"evaluations": "network evaluations", "seconds": "wall time of the run (s)"}
NOTES = {"evaluations": "one state through the network counts one, a backward pass two",
         "seconds": "measured: differs between reruns"}


def plot_cost_figure(curves: pd.DataFrame, cost: str, title: str):
    """curves: tidy error curves of every run (columns task, setting, estimator, seed, iteration,
    rel_error and the cost column). Each setting is one line per panel: at each iteration the
    mean over seeds of the cost and of e_k/e_0, with the seeds' min-max band of e_k/e_0."""
    style.setup()
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(curves["task"]))
    estimators = [m for m in ESTIMATOR_COLOURS if m in set(curves["estimator"])]
    settings = list(dict.fromkeys(curves["setting"]))
    fig, axes = plt.subplots(len(tasks), len(estimators), figsize=(4.2 * len(estimators), 3.3 * len(tasks)),
                             squeeze=False, sharex=True, sharey=True)
    for row, task in enumerate(tasks):
        for col, estimator in enumerate(estimators):
            ax = axes[row][col]
            for i, setting in enumerate(settings):
                runs = curves[(curves["task"] == task) & (curves["estimator"] == estimator)
                              & (curves["setting"] == setting)]
                if runs.empty:
                    continue
                stats = runs[runs["iteration"] > 0].groupby("iteration").agg(
                    cost=(cost, "mean"), mean=("rel_error", "mean"), low=("rel_error", "min"),
                    high=("rel_error", "max"))
                ax.plot(stats["cost"], stats["mean"], color=f"C{i}", label=setting)
                ax.fill_between(stats["cost"], stats["low"], stats["high"], color=f"C{i}", alpha=0.2, linewidth=0)
            ax.axhline(1.0, color="grey", lw=0.8, ls=":")
            ax.set(xscale="log", yscale="log", title=f"Q-{task}, {estimator}")
            if row == len(tasks) - 1:
                ax.set_xlabel(AXES[cost])
            if col == 0:
                ax.set_ylabel("$e_k/e_0$")
    fig.suptitle(f"{title}\n{AXES[cost]}: {NOTES[cost]}")
    fig.tight_layout()
    style.legend_below(fig, *axes[0][0].get_legend_handles_labels())
    return fig
