"""The notebook's figure, with the truth beside it: Q(a_0, s) and Q(a_1, s) against Q* and the
exact Q, e_k/e_0 against the learned Q* (the notebook's metric), and against the exact Q.

Fixed against the notebook: panel i draws Q*(a_i, s) (the notebook drew Q*(a_1, s) in both),
every curve is a mean over seeds with a min-max band, and a run that did not converge is
marked so in the legend. For control, the legend also gives each greedy policy's exact score
(bellman/problem/greedy.py): the learned Q*'s, and each estimator's mean over seeds of its shortfall (0:
optimal, 1: as bad as the uniform-random policy) and share of states with a wrong greedy action.
Given the final networks' exact errors (metrics.exact_scores), the legend gives each one's centred
error against the exact Q over the exact Q's norm, uniform over the circle and weighted by the
stationary density of the task's behaviour policy (where the data are: bellman/problem/stationary.py).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from rlstudy.bellman.problem.exact import interpolate
from rlstudy.bellman.figures import ESTIMATOR_COLOURS
from rlstudy.bellman.problem.greedy import GreedyScore
from rlstudy.bellman.numerics.compiled.qnet import q_values
from rlstudy.plotting import style


def shifted_q(theta: torch.Tensor, q_star: np.ndarray, states: torch.Tensor) -> np.ndarray:
    """Q on the grid, shifted per action to the mean level of Q* (the metric ignores the offset)."""
    with torch.no_grad():
        q = q_values(theta, states).double().numpy()
    return q - (q - q_star).mean(axis=0, keepdims=True)


def greedy_note(scores: list[GreedyScore]) -> str:
    """The legend's words for greedy policies' scores (a mean when there are several seeds)."""
    shortfall = np.mean([s.shortfall for s in scores])
    wrong = np.mean([s.wrong_share for s in scores])
    return f"greedy shortfall {shortfall:.3g}, wrong in {100 * wrong:.3g} % of states"


def exact_error_note(scores: list[dict[str, float]]) -> str:
    """The legend's words for exact errors (metrics.exact_scores' dicts; a mean when there are several
    seeds): the uniform centred error and the density-weighted one, each over the exact Q's norm."""
    uniform = np.mean([s["error_exact_normalised"] for s in scores])
    weighted = np.mean([s["error_exact_weighted_normalised"] for s in scores])
    return f"error/exact Q {uniform:.3g} uniform, {weighted:.3g} where the data are"


def plot_q_figure(reference: torch.Tensor, exact: np.ndarray, networks: dict[str, list[torch.Tensor]],
                  curves: pd.DataFrame, title: str, converged_below: float,
                  greedy: dict[str, list[GreedyScore]] | None = None,
                  exact_errors: dict[str, list[dict[str, float]]] | None = None):
    """reference: the learned Q*; exact: the exact Q on its grid (n, 2); networks: estimator -> final
    networks (one per seed); curves: tidy error curves of those runs; greedy (control): the greedy
    policies' scores, "Q*" -> [the learned Q*'s] and estimator -> one per seed; exact_errors: likewise,
    metrics.exact_scores of each (given a density: its uniform and weighted exact errors)."""
    style.setup()
    import matplotlib.pyplot as plt

    states = torch.linspace(0, 2 * math.pi, 100, dtype=torch.float64)
    with torch.no_grad():
        q_star = q_values(reference, states).double().numpy()
    x = states.numpy()
    q_exact = interpolate(exact, x)
    q_exact += (q_star - q_exact).mean(axis=0, keepdims=True)
    # 2 x 2: Q of each action above, e_k/e_0 against each reference below, so that the figure is
    # about as tall as wide and stays readable at a page's (or the HTML report's) width.
    fig, grid = plt.subplots(2, 2, figsize=(11, 7.6))
    axes = grid.ravel()
    for i in range(2):
        notes = [*([greedy_note(greedy["Q*"])] if greedy else []),
                 *([exact_error_note(exact_errors["Q*"])] if exact_errors else [])]
        star = "\n".join(["learned Q*", *notes])
        axes[i].plot(x, q_star[:, i], color="black", lw=2, label=star)
        axes[i].plot(x, q_exact[:, i], color="black", lw=1.5, ls=":", label="exact Q (offset to Q*'s mean)")
        axes[i].set(xlabel="$s$", ylabel=f"$Q(a_{i}, s)$", title=f"$a_{i} = {2 * i - 1:+d}$")
    for estimator in [m for m in ESTIMATOR_COLOURS if m in networks]:
        colour = ESTIMATOR_COLOURS[estimator]
        runs = curves[curves["estimator"] == estimator]
        finals = runs.groupby("seed")["rel_error"].last()
        failed = (finals > converged_below).any()
        label = f"{estimator}: final $e_k/e_0$ {finals.mean():.3g}" + (" (NOT converged)" if failed else "")
        if greedy:
            label += f"\n{greedy_note(greedy[estimator])}"
        if exact_errors:
            label += f"\n{exact_error_note(exact_errors[estimator])}"
        q = np.stack([shifted_q(theta, q_star, states) for theta in networks[estimator]])
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
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    style.legend_below(fig, *axes[0].get_legend_handles_labels(), frameon=False)
    return fig
