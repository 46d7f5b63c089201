"""Errors by frequency: each estimator's final error against the exact Q by Fourier mode k, beside the
factor gamma * exp(-sigma^2 * dt * k^2 / 2) by which one exact Bellman step contracts mode k."""

from __future__ import annotations

import pandas as pd

from rlstudy.bellman.figures import ESTIMATOR_COLOURS
from rlstudy.plotting import style

SETTING_STYLES = ["-", "--", ":", "-."]


def plot_fourier_error_figure(rows: pd.DataFrame, title: str):
    """rows: fourier_error.csv's rows of one dataset and task; a line per setting and estimator
    (colour: estimator, line style: setting), the median over seeds with a min-max band."""
    style.setup()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    settings = sorted(rows["setting"].unique())
    for setting_index, setting in enumerate(settings):
        for estimator in [m for m in ESTIMATOR_COLOURS if m in set(rows.loc[rows["setting"] == setting, "estimator"])]:
            runs = rows[(rows["setting"] == setting) & (rows["estimator"] == estimator)]
            table = runs.pivot(index="mode", columns="seed", values="error_normalised")
            colour = ESTIMATOR_COLOURS[estimator]
            ax.plot(table.index, table.median(axis=1), color=colour, marker=".",
                    ls=SETTING_STYLES[setting_index % len(SETTING_STYLES)], label=f"{setting} {estimator}")
            if table.shape[1] > 1:
                ax.fill_between(table.index, table.min(axis=1), table.max(axis=1), color=colour, alpha=0.12)
    ax.set(yscale="log", xlabel="Fourier mode $k$",
           ylabel="final error in mode $k$ / exact Q's centred norm (log)",
           title=f"median over seeds, band min-max; {rows['seed'].nunique()} seed(s) at most")
    contraction = rows.drop_duplicates("mode").set_index("mode")["bellman_contraction"].sort_index()
    twin = ax.twinx()
    twin.plot(contraction.index, contraction.to_numpy(), color="black", lw=1.5, ls=":",
              label=r"Bellman step's contraction $\gamma e^{-\sigma^2 \Delta t\, k^2/2}$ (right axis)")
    twin.set(ylim=(0, 1.05), ylabel="contraction of mode $k$ per exact Bellman step")
    handles, labels = ax.get_legend_handles_labels()
    twin_handles, twin_labels = twin.get_legend_handles_labels()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    style.legend_below(fig, handles + twin_handles, labels + twin_labels, frameon=False)
    return fig
