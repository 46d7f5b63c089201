"""Learning curves: mean and a band over seeds, one line per method, shared by every agent figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd


def mean_and_band(runs: Sequence[pd.DataFrame], x: str, y: str) -> pd.DataFrame:
    """Per x value: mean, min and max of y over the runs (seeds), on the x values all runs share.

    Runs of unequal length (a stopped run, a smaller smoke budget) are cut to the common x values,
    so the band never mixes a different number of seeds along the curve.
    """
    if not runs:
        raise ValueError("mean_and_band needs at least one run")
    common = set(runs[0][x])
    for run in runs[1:]:
        common &= set(run[x])
    xs = np.array(sorted(common))
    values = np.stack([run.set_index(x).loc[xs, y].to_numpy(dtype=float) for run in runs])
    return pd.DataFrame({x: xs, "mean": values.mean(0), "low": values.min(0), "high": values.max(0), "n": len(runs)})


def on_common_steps(runs: Sequence[pd.DataFrame], y: str) -> list[pd.DataFrame]:
    """Each run's y at every episode end of any run, taken from the run's last finished episode, over
    the steps every run covers. Seeds whose episodes end at different steps (CartPole's terminations)
    share no x value to average at otherwise; fixed-length episodes (Pendulum's) map onto themselves."""
    first = max(int(run["step"].iloc[0]) for run in runs)
    last = min(int(run["step"].iloc[-1]) for run in runs)
    grid = np.unique(np.concatenate([run["step"].to_numpy() for run in runs]))
    grid = pd.DataFrame({"step": grid[(grid >= first) & (grid <= last)]})
    return [pd.merge_asof(grid, run[["step", y]], on="step") for run in runs]


def evaluation_label(run: str, mean_return: float, solved_return: float) -> str:
    """'seed0 500.0', or 'seed0 149.4 FAILS (< 475)' for a run below the bar."""
    failing = f" FAILS (< {solved_return:g})" if mean_return < solved_return else ""
    return f"{run} {mean_return:.1f}{failing}"


def plot_curves(
    ax: plt.Axes,
    methods: Mapping[str, Sequence[pd.DataFrame]],
    x: str,
    y: str,
    colours: Mapping[str, object] | None = None,
) -> None:
    """One line (mean over seeds) and one shaded band (min to max over seeds) per method."""
    for i, (label, runs) in enumerate(methods.items()):
        stats = mean_and_band(runs, x, y)
        colour = (colours or {}).get(label, f"C{i}")
        seeds = f" ({len(runs)} seed{'s' if len(runs) > 1 else ''})"
        ax.plot(stats[x], stats["mean"], color=colour, label=label + seeds)
        if len(runs) > 1:
            ax.fill_between(stats[x], stats["low"], stats["high"], color=colour, alpha=0.25, linewidth=0)


def running_mean(values: np.ndarray, window: int) -> np.ndarray:
    """Mean over the last `window` values (fewer at the start), as the notebooks smooth episode rewards."""
    values = np.asarray(values, dtype=float)
    sums = np.cumsum(np.concatenate([[0.0], values]))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(ends - window, 0)
    return (sums[ends] - sums[starts]) / (ends - starts)
