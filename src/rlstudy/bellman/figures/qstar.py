"""Can the notebook's own procedure reach the truth, and at what cost? The centred error against the
exact Q, relative to the exact Q's centred norm, against the network evaluations spent: Q*'s
training on the long trajectory beside the SGD runs on the short one."""

from __future__ import annotations

import pandas as pd

from rlstudy.bellman.figures import ESTIMATOR_COLOURS
from rlstudy.plotting import style


def plot_reference_figure(reference_curves: pd.DataFrame, run_curves: pd.DataFrame, title: str):
    """reference_curves: Q*'s errors.csv of each task (task, evaluations, error_exact_normalised);
    run_curves: SGD runs' errors.csv with an error_exact_normalised column added."""
    style.setup()
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(reference_curves["task"]))
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.5 * len(tasks), 4.2), squeeze=False, sharey=True)
    for ax, task in zip(axes[0], tasks):
        q_star = reference_curves[reference_curves["task"] == task].iloc[1:]
        ax.plot(q_star["evaluations"], q_star["error_exact_normalised"], color="black", lw=2,
                label=f"Q*: SGD on the long trajectory (final {q_star['error_exact_normalised'].iloc[-1]:.3f})")
        runs = run_curves[(run_curves["task"] == task) & (run_curves["iteration"] > 0)]
        for estimator in [m for m in ESTIMATOR_COLOURS if m in set(runs["estimator"])]:
            stats = runs[runs["estimator"] == estimator].groupby("iteration").agg(
                cost=("evaluations", "mean"), mean=("error_exact_normalised", "mean"),
                low=("error_exact_normalised", "min"), high=("error_exact_normalised", "max"))
            colour = ESTIMATOR_COLOURS[estimator]
            ax.plot(stats["cost"], stats["mean"], color=colour, label=f"SGD-{estimator} run (final {stats['mean'].iloc[-1]:.3f})")
            ax.fill_between(stats["cost"], stats["low"], stats["high"], color=colour, alpha=0.2, linewidth=0)
        ax.set(xscale="log", yscale="log", xlabel="network evaluations",
               ylabel="centred error / exact Q's centred norm", title=f"Q-{task}")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    for ax in axes[0]:  # each panel's legend under it (its finals differ), outside the data
        style.legend_under(ax, fontsize="x-small")
    return fig
