"""The basics notebook's agent figures: learning curves, and value and policy maps over two state
coordinates with a greedy rollout drawn on them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from matplotlib.patches import Rectangle

from rlstudy.plotting import style
from rlstudy.plotting.curves import on_common_steps, plot_curves, running_mean


def learning_curve_figure(methods: Mapping[str, Sequence[pd.DataFrame]], x: str, window: int, title: str,
                          solved_return: float | None = None,
                          by_seed: Mapping[str, Sequence[tuple[str, float]]] | None = None):
    """Running mean of the episode return against `x` (episode, or env step on the steps every run
    covers): mean and band over seeds, one line per method, and the solved bar dashed; the legend
    below the axes. by_seed: each method's (run, greedy evaluation return), as a table under the curves
    (in a title they widened the figure until the curves had a third of it)."""
    style.setup()
    import matplotlib.pyplot as plt

    if by_seed:
        fig, (ax, table_ax) = plt.subplots(2, 1, figsize=(6.5, 5.4), height_ratios=(4, 1.1))
        seed_table(table_ax, by_seed, solved_return)
    else:
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
    curves = {}
    for label, runs in methods.items():
        smoothed = [run.assign(smoothed=running_mean(run["return"].to_numpy(), window)) for run in runs]
        curves[label] = on_common_steps(smoothed, "smoothed") if x == "step" else smoothed
    plot_curves(ax, curves, x, "smoothed")
    if solved_return is not None:
        ax.axhline(solved_return, color="0.3", linestyle="--", linewidth=1, label=f"solved ({solved_return:g})")
    ax.set(xlabel="environment steps" if x == "step" else "episode",
           ylabel=f"episode return (running mean of {window})")
    ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    # Under the axes: inside, any corner covers some method's curve (MPO's legend hid DDPG's).
    style.legend_below(fig, *ax.get_legend_handles_labels())
    return fig


def seed_table(ax, by_seed: Mapping[str, Sequence[tuple[str, float]]], solved_return: float | None) -> None:
    """A row per method, a column per seed: each run's greedy evaluation return, red where it is below the
    solved bar."""
    ax.axis("off")
    runs = list(dict.fromkeys(run for results in by_seed.values() for run, _ in results))
    values = {method: dict(results) for method, results in by_seed.items()}
    cells = [[f"{values[method][run]:.1f}" if run in values[method] else "" for run in runs] for method in by_seed]
    table = ax.table(cellText=cells, rowLabels=list(by_seed), colLabels=[run.removeprefix("seed") for run in runs],
                     loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    failing = solved_return is not None and any(v < solved_return for results in values.values()
                                                for v in results.values())
    for row, method in enumerate(by_seed, start=1):
        for column, run in enumerate(runs):
            if solved_return is not None and values[method].get(run, solved_return) < solved_return:
                table[row, column].get_text().set_color("C3")
    note = f"; red: below the solved bar ({solved_return:g})" if failing else ""
    ax.set_title(f"greedy evaluation return by seed (columns: the seeds){note}", fontsize="small")


@dataclass(frozen=True)
class Panel:
    """One colour map: values[i, j] at (xs[i], ys[j])."""

    values: np.ndarray
    title: str
    colour_label: str
    cmap: str = "viridis"
    levels: Mapping[int, str] | None = None  # discrete values and their names (a policy over discrete actions)


def maps_figure(xs: np.ndarray, ys: np.ndarray, panels: Sequence[Panel], labels: tuple[str, str], title: str,
                trajectory: np.ndarray | None = None):
    """Panels side by side over the same (x, y) grid, the trajectory (n, 2) drawn on each."""
    style.setup()
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.4 * len(panels), 4.4), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        if panel.levels:
            cmap, limits = plt.get_cmap(panel.cmap, len(panel.levels)), dict(vmin=-0.5, vmax=len(panel.levels) - 0.5)
        else:
            cmap, limits = plt.get_cmap(panel.cmap), {}
        mesh = ax.pcolormesh(xs, ys, panel.values.T, cmap=cmap, shading="nearest", rasterized=True, **limits)
        bar = fig.colorbar(mesh, ax=ax, label=panel.colour_label)
        if panel.levels:
            bar.set_ticks(list(panel.levels), labels=list(panel.levels.values()))
        if trajectory is not None:
            ax.plot(trajectory[:, 0], trajectory[:, 1], "r-", linewidth=2, label="greedy rollout")
            ax.plot(*trajectory[0], "wo", markeredgecolor="r", label="start")
        ax.set(xlabel=labels[0], ylabel=labels[1], title=panel.title, xlim=(xs[0], xs[-1]), ylim=(ys[0], ys[-1]))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    if trajectory is not None:  # under each map: on it, the legend hid a corner of the map
        for ax in axes[0]:
            style.legend_under(ax, fontsize=8, ncol=2)
    return fig


def break_at_wraps(angles: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(angle, value) points with a NaN row where the angle wraps around ±pi, so no line crosses the map."""
    points = np.column_stack([angles, values]).astype(float)
    jumps = np.flatnonzero(np.abs(np.diff(angles)) > np.pi) + 1
    return np.insert(points, jumps, np.nan, axis=0)


def grid_panels(grid, table: np.ndarray):
    """Value max_a Q and greedy action of every cell of a 2-D grid (a Q-table, or the linear network's)."""
    values, policy = (f(table, axis=1).reshape(grid.bins) for f in (np.max, np.argmax))
    levels = {a: str(a) for a in range(table.shape[1])}
    return grid.axis_centres(0), grid.axis_centres(1), [
        Panel(values, "value function", r"$\max_a Q(s, a)$"),
        Panel(policy, "greedy policy", "action", cmap="viridis", levels=levels)]


def dqn_max_q_panel(network: torch.nn.Module, low: np.ndarray, high: np.ndarray, resolution: int = 97):
    """max_a Q over cart position and pole angle at zero velocities (CartPole's observation order)."""
    positions = np.linspace(low[0], high[0], resolution)
    angles = np.linspace(low[2], high[2], resolution)
    grid = np.zeros((resolution, resolution, 4), np.float32)
    grid[..., 0], grid[..., 2] = np.meshgrid(positions, angles, indexing="ij")
    with torch.no_grad():
        values = network(torch.from_numpy(grid)).max(dim=-1).values.numpy()
    return positions, angles, Panel(values, "max-Q landscape (velocities = 0)", r"$\max_a Q(s, a)$")


def pendulum_panels(model, max_speed: float, resolution: int = 81):
    """Q(s, mu(s)) and mu(s) over angle and angular velocity (Pendulum's observation: cos, sin, velocity)."""
    angles = np.linspace(-np.pi, np.pi, resolution)
    speeds = np.linspace(-max_speed, max_speed, resolution)
    theta, speed = np.meshgrid(angles, speeds, indexing="ij")
    observations = torch.from_numpy(np.stack([np.cos(theta), np.sin(theta), speed], -1).astype(np.float32))
    with torch.no_grad():
        actions = model.actor(observations)
        values = model.critic(observations, actions).numpy()
    return angles, speeds, [Panel(values, "Q-value of the policy", r"$Q(s, \mu(s))$"),
                            Panel(actions[..., 0].numpy(), "policy", r"torque $\mu(s)$", cmap="coolwarm")]


def grid_maps(agent, model, env, params, observations: np.ndarray, title: str):
    """A grid agent's value and greedy policy per cell, the rollout's cells drawn on them."""
    grid = agent.grid(params)
    xs, ys, panels = grid_panels(grid, agent.table(model))
    return maps_figure(xs, ys, panels, ("position", "velocity"), title, grid.centre(observations))


def max_q_map(agent, model, env, params, observations: np.ndarray, title: str):
    """CartPole's max-Q landscape at zero velocities: a slice on which the rollout has no path."""
    space = env.observation_space
    xs, ys, panel = dqn_max_q_panel(model, space.low, space.high)
    fig = maps_figure(xs, ys, [panel], ("cart position", "pole angle (rad)"), title)
    # The notebook's map spans the observation bounds, twice the limits at which an episode ends:
    # outside the box the network never saw a state, and its values there are extrapolation.
    x_end, angle_end = env.unwrapped.x_threshold, env.unwrapped.theta_threshold_radians
    fig.axes[0].add_patch(Rectangle((-x_end, -angle_end), 2 * x_end, 2 * angle_end, fill=False, color="w",
                                    linestyle="--"))
    # The legend lies under the map, on white: its key is the box drawn dark.
    key = Rectangle((0, 0), 1, 1, fill=False, color="0.3", linestyle="--")
    style.legend_under(fig.axes[0], [key], ["the white dashed box: where an episode continues"], fontsize=8)
    return fig


def pendulum_maps(agent, model, env, params, observations: np.ndarray, title: str):
    """Pendulum's Q(s, mu(s)) and mu(s) over angle and angular velocity, the rollout drawn on them."""
    xs, ys, panels = pendulum_panels(model, float(env.observation_space.high[2]))
    angles = np.arctan2(observations[:, 1], observations[:, 0])
    return maps_figure(xs, ys, panels, ("angle (rad)", "angular velocity"), title,
                       break_at_wraps(angles, observations[:, 2]))


@dataclass(frozen=True)
class ValueMap:
    """A kind of value/policy figure: draw(agent, model, env, params, observations, title) -> figure;
    draws_rollout: whether the rollout's path is on it (the title says so)."""

    draw: object
    draws_rollout: bool


VALUE_MAPS = {"grid": ValueMap(grid_maps, True), "max_q": ValueMap(max_q_map, False),
              "pendulum": ValueMap(pendulum_maps, True)}
"""By the registry's `value_map` of an agent (agents/kinds.py)."""
