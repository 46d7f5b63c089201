"""Training diagnostics: what every learner writes beside its returns (docs/diagnostics.md).

Each update returns its statistics as a dict of numbers (CleanRL/Acme style); the training loop
hands them to a `DiagnosticsLog`, which averages them over a window of updates and keeps one row
per window: `diagnostics.csv`. The statistics are read from values the update already has (under
`torch.no_grad()` or detached), so they draw no random number and change no computation of the run.
The deep learners whose updates are cheap next to their statistics (DQN, DDPG, the offline chain's)
measure every STATISTICS_EVERY-th update only, as CleanRL logs every 100th step: a window's mean is
over those. A log can also mirror its rows to TensorBoard event files, for watching a long run live.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .errors import InputError

# The deep learners measure one update in this many (the 0th, the 10th, ...); measuring every one
# (a few reductions and a gradient norm) cost them 4-10 % of their time, one in ten under 2 %
# (benchmarks/diagnostics_overhead.py).
STATISTICS_EVERY = 10


def grad_norm(parameters: Iterable[torch.nn.Parameter]) -> float:
    """The L2 norm of the gradients of `parameters` as they are now (after backward, before the step):
    the norm of the per-tensor norms (torch.nn.utils.get_total_norm, without its generality's cost)."""
    with torch.no_grad():
        norms = [torch.linalg.vector_norm(p.grad) for p in parameters if p.grad is not None]
        return torch.linalg.vector_norm(torch.stack(norms)).item() if norms else 0.0


def td_statistics(loss: torch.Tensor, q: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
    """What the TD learners share: the loss they descend, Q(s, a) at the batch's actions (mean and
    max over the batch) and the mean of the targets it regresses on."""
    with torch.no_grad():
        return {"loss_q": loss.item(), "q_mean": q.mean().item(), "q_max": q.max().item(),
                "target_mean": target.mean().item()}


def window_means(window: list[Mapping[str, float]]) -> dict[str, float]:
    """Each statistic's mean over the updates that have it, NaN skipped (NaN if none is a number), in
    the order the statistics first appear: pandas' DataFrame(window).mean(), the same float64 sum
    (NumPy's) and count, without building a DataFrame (a few ms, at every step of a CBO run whose
    epochs are one step). A window of one update is its values, each as NumPy's sum leaves it (0.0 + v,
    so -0.0 is 0.0), without the arrays (a tenth of a millisecond, at every step of such a run)."""
    if len(window) == 1:
        return {name: math.nan if math.isnan(value) else 0.0 + float(value) for name, value in window[0].items()}
    names = dict.fromkeys(name for stats in window for name in stats)
    means = {}
    for name in names:
        values = np.array([stats.get(name, math.nan) for stats in window], dtype=np.float64)  # pandas' column
        numbers = ~np.isnan(values)
        count = int(numbers.sum())
        means[name] = float(np.where(numbers, values, 0.0).sum() / count) if count else math.nan
    return means


class DiagnosticsLog:
    """Per-update statistics, averaged over windows of updates: one row per window.

    `add` one dict per update (keys may differ between updates, e.g. an actor updated every other
    step: a mean is over the updates that have the key); `write` closes the window into a row of
    the x value (the step, episode or iteration it ends at), the window's means and `running`
    values (e.g. a count so far) after them. Non-finite statistics are kept as they are.
    """

    def __init__(self, tensorboard: str | Path | None = None):
        self.rows: list[dict[str, float]] = []
        self.window: list[Mapping[str, float]] = []
        self.writer = None
        if tensorboard is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as err:
                raise InputError("config 'tensorboard: true' needs the optional TensorBoard extra: "
                                 f"pip install -e '.[tensorboard]' ({err})") from err
            self.writer = SummaryWriter(str(tensorboard))

    def __len__(self) -> int:
        """Updates in the open window."""
        return len(self.window)

    def add(self, stats: Mapping[str, float]) -> None:
        self.window.append(stats)

    def write(self, x_name: str, x: int, **running: float) -> None:
        """Close the open window (if it holds any update) into a row."""
        if not self.window:
            return
        row = {x_name: int(x), **window_means(self.window), **running}
        self.rows.append(row)
        self.window = []
        if self.writer is not None:
            for name, value in row.items():
                if name != x_name:
                    self.writer.add_scalar(f"diagnostics/{name}", value, global_step=int(x))
            self.writer.flush()

    def write_at(self, x_name: str, x: int, every: int, last: int,
                 running: Callable[[], Mapping[str, float]] | None = None) -> None:
        """Close the window at every `every`-th x (step, episode, iteration) and at the last, with the
        values `running()` returns then (e.g. what a replay buffer holds) after the means."""
        if x % every == 0 or x == last:
            self.write(x_name, x, **(running() if running else {}))

    def restore(self, rows, x_name: str, up_to: int) -> None:
        """The rows of a resumed run (its checkpoint holds them; windows close at checkpoints),
        refused (ValueError, the log unchanged) unless they are what `write` makes: dicts of named
        numbers whose `x_name` increases and ends at or before `up_to`."""
        if not (isinstance(rows, list) and all(isinstance(row, dict) for row in rows)):
            raise ValueError("diagnostics are not a list of rows")
        for row in rows:
            if not all(isinstance(name, str) and isinstance(value, (int, float)) and not isinstance(value, bool)
                       for name, value in row.items()):
                raise ValueError("a diagnostics row holds something other than named numbers")
        positions = [row.get(x_name) for row in rows]
        if not (all(isinstance(x, int) for x in positions) and positions == sorted(set(positions))
                and (not positions or positions[-1] <= up_to)):
            raise ValueError(f"diagnostics rows are not windows of {up_to} {x_name}s")
        self.rows = [dict(row) for row in rows]

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
