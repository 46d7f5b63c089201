"""The notebook's trajectory diagnostics: states, states mod 2*pi, rewards, and action against state;
and where the data are: the histogram of the states on the circle over the behaviour policy's
stationary density (bellman/problem/stationary.py), on a log scale (evaluation's spans three decades)."""

from __future__ import annotations

import math

import numpy as np

from rlstudy.bellman.problem.sde import Trajectory
from rlstudy.plotting import style


HISTOGRAM_BINS = 100


def plot_trajectory_figure(traj: Trajectory, title: str, density: np.ndarray | None = None):
    """density: the stationary density on grid(len(density)), mean 1, drawn under the histogram."""
    style.setup()
    import matplotlib.pyplot as plt

    steps = np.arange(len(traj))
    wrapped = np.remainder(traj.states, 2 * math.pi)
    dots = dict(marker=".", ls="none", markersize=0.3, rasterized=True)  # rasterised: 1e6 points in a small PDF
    fig, named = plt.subplot_mosaic([["states", "circle", "where"], ["rewards", "actions", "where"]],
                                    figsize=(16, 6.5))
    axes = np.array([[named["states"], named["circle"]], [named["rewards"], named["actions"]]])
    axes[0, 0].plot(steps, traj.states, **dots)
    axes[0, 0].set(xlabel="step $i$", ylabel="$s_i$", title="states")
    axes[0, 1].plot(steps, wrapped, alpha=0.2, **dots)
    axes[0, 1].set(xlabel="step $i$", ylabel=r"$s_i \;\mathrm{mod}\; 2\pi$", title="states on the circle")
    axes[1, 0].plot(steps, traj.rewards, alpha=0.2, **dots)
    axes[1, 0].set(xlabel="step $i$", ylabel="$r_i$", title="rewards")
    axes[1, 1].plot(wrapped, 2.0 * traj.action_indices - 1.0, alpha=0.05, **dots)
    axes[1, 1].set(xlabel=r"$s_i \;\mathrm{mod}\; 2\pi$", ylabel="$a_i$", yticks=[-1, 1], title="action against state")
    draw_where_the_data_are(named["where"], wrapped, density)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    style.legend_under(named["where"], fontsize=8)
    return fig


def draw_where_the_data_are(ax, wrapped: np.ndarray, density: np.ndarray | None) -> None:
    """The states' histogram on the circle, scaled like the density (mean 1 over the circle: the
    probability density times 2*pi), and the stationary density as a line over it."""
    counts, edges = np.histogram(wrapped, bins=HISTOGRAM_BINS, range=(0, 2 * math.pi))
    ax.stairs(counts / counts.mean(), edges, fill=True, color="tab:blue", alpha=0.4, label="states of the trajectory")
    if density is not None:
        angles = np.append(np.arange(len(density)) * (2 * math.pi / len(density)), 2 * math.pi)
        ax.plot(angles, np.append(density, density[:1]), color="black", lw=1.2,
                label="stationary density of the policy")
    ax.set_yscale("log")
    ax.set(xlabel=r"$s \;\mathrm{mod}\; 2\pi$", ylabel="density (mean 1 over the circle)", title="where the data are")
