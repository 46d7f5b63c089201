"""The notebook's trajectory diagnostics: states, states mod 2*pi, rewards, and action against state."""

from __future__ import annotations

import math

import numpy as np

from rlstudy.bellman.sde import Trajectory
from rlstudy.plotting import style


def plot_trajectory_figure(traj: Trajectory, title: str):
    style.setup()
    import matplotlib.pyplot as plt

    steps = np.arange(len(traj))
    wrapped = np.remainder(traj.states, 2 * math.pi)
    dots = dict(marker=".", ls="none", markersize=0.3, rasterized=True)  # rasterised: 1e6 points in a small PDF
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5))
    axes[0, 0].plot(steps, traj.states, **dots)
    axes[0, 0].set(xlabel="step $i$", ylabel="$s_i$", title="states")
    axes[0, 1].plot(steps, wrapped, alpha=0.2, **dots)
    axes[0, 1].set(xlabel="step $i$", ylabel=r"$s_i \;\mathrm{mod}\; 2\pi$", title="states on the circle")
    axes[1, 0].plot(steps, traj.rewards, alpha=0.2, **dots)
    axes[1, 0].set(xlabel="step $i$", ylabel="$r_i$", title="rewards")
    axes[1, 1].plot(wrapped, 2.0 * traj.action_indices - 1.0, alpha=0.05, **dots)
    axes[1, 1].set(xlabel=r"$s_i \;\mathrm{mod}\; 2\pi$", ylabel="$a_i$", yticks=[-1, 1], title="action against state")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
