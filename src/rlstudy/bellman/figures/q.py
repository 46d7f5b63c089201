"""The notebook's figure, with the truth beside it: Q(a_0, s) and Q(a_1, s) against Q* and the
exact Q, e_k/e_0 against the learned Q* (the notebook's metric), and against the exact Q.

Fixed against the notebook: panel i draws Q*(a_i, s) (the notebook drew Q*(a_1, s) in both),
every curve is a mean over seeds with a min-max band, and a run that did not converge is
marked so in the legend.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from rlstudy.bellman.exact import interpolate
from rlstudy.bellman.figures import ESTIMATOR_COLOURS
from rlstudy.bellman.qnet import q_values
from rlstudy.plotting import style


def shifted_q(theta: torch.Tensor, q_star: np.ndarray, states: torch.Tensor) -> np.ndarray:
    """Q on the grid, shifted per action to the mean level of Q* (the metric ignores the offset)."""
    with torch.no_grad():
        q = q_values(theta, states).double().numpy()
    return q - (q - q_star).mean(axis=0, keepdims=True)


def plot_q_figure(reference: torch.Tensor, exact: np.ndarray, networks: dict[str, list[torch.Tensor]],
                  curves: pd.DataFrame, title: str, converged_below: float):
    """reference: the learned Q*; exact: the exact Q on its grid (n, 2); networks: method -> final
    networks (one per seed); curves: tidy error curves of those runs."""
    style.setup()
    import matplotlib.pyplot as plt

    states = torch.linspace(0, 2 * math.pi, 100, dtype=torch.float64)
    with torch.no_grad():
        q_star = q_values(reference, states).double().numpy()
    x = states.numpy()
    q_exact = interpolate(exact, x)
    q_exact += (q_star - q_exact).mean(axis=0, keepdims=True)
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.4))
    for i in range(2):
        axes[i].plot(x, q_star[:, i], color="black", lw=2, label="learned Q*")
        axes[i].plot(x, q_exact[:, i], color="black", lw=1.5, ls=":", label="exact Q (offset to Q*'s mean)")
        axes[i].set(xlabel="$s$", ylabel=f"$Q(a_{i}, s)$", title=f"$a_{i} = {2 * i - 1:+d}$")
    for method in [m for m in ESTIMATOR_COLOURS if m in networks]:
        colour = ESTIMATOR_COLOURS[method]
        runs = curves[curves["method"] == method]
        finals = runs.groupby("seed")["rel_error"].last()
        failed = (finals > converged_below).any()
        label = f"{method}: final $e_k/e_0$ {finals.mean():.3g}" + (" (NOT converged)" if failed else "")
        q = np.stack([shifted_q(theta, q_star, states) for theta in networks[method]])
        for i in range(2):
            axes[i].plot(x, q[:, :, i].mean(axis=0), color=colour, label=label if i == 0 else None)
            if len(q) > 1:
                axes[i].fill_between(x, q[:, :, i].min(axis=0), q[:, :, i].max(axis=0), color=colour, alpha=0.2)
        for ax, column in zip(axes[2:], ("rel_error", "rel_error_exact")):
            table = runs.pivot(index="iteration", columns="seed", values=column)
            ax.plot(table.index, table.mean(axis=1), color=colour, ls="--" if failed else "-")
            if table.shape[1] > 1:
                ax.fill_between(table.index, table.min(axis=1), table.max(axis=1), color=colour, alpha=0.2)
    seeds = curves["seed"].nunique()
    for ax, against in zip(axes[2:], ("the learned Q* (the notebook's metric)", "the exact Q")):
        ax.axhline(1.0, color="grey", lw=0.8, ls=":")
        ax.set(yscale="log", xlabel="iteration $k$", ylabel="$e_k/e_0$ (log scale)",
               title=f"against {against}\nmean over {seeds} seed(s), band min-max")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.08), frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
