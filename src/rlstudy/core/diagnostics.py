"""Training diagnostics: what every learner writes beside its returns (docs/diagnostics.md).

Each update returns its statistics as a dict of numbers (CleanRL/Acme style); the training loop
hands them to a `DiagnosticsLog`, which averages them over a window of updates and keeps one row
per window: `diagnostics.csv`. The statistics are read from values the update already has (under
`torch.no_grad()` or detached), so they draw no random number and change no computation of the run.
A log can also mirror its rows to TensorBoard event files, for watching a long run live.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd
import torch

from .errors import InputError


def grad_norm(parameters: Iterable[torch.nn.Parameter]) -> float:
    """The L2 norm of the gradients of `parameters` as they are now (after backward, before the step)."""
    with torch.no_grad():
        grads = [p.grad for p in parameters if p.grad is not None]
        return float(torch.nn.utils.get_total_norm(grads)) if grads else 0.0


def td_statistics(loss: torch.Tensor, q: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
    """What the TD learners share: the loss they descend, Q(s, a) at the batch's actions (mean and
    max over the batch) and the mean of the targets it regresses on."""
    with torch.no_grad():
        return {"loss_q": float(loss), "q_mean": float(q.mean()), "q_max": float(q.max()),
                "target_mean": float(target.mean())}


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
        means = pd.DataFrame(self.window).mean().to_dict()
        row = {x_name: int(x), **{k: float(v) for k, v in means.items()}, **running}
        self.rows.append(row)
        self.window = []
        if self.writer is not None:
            for name, value in row.items():
                if name != x_name:
                    self.writer.add_scalar(f"diagnostics/{name}", value, global_step=int(x))
            self.writer.flush()

    def write_at(self, x_name: str, x: int, every: int, last: int) -> None:
        """Close the window at every `every`-th x (step, episode, iteration) and at the last."""
        if x % every == 0 or x == last:
            self.write(x_name, x)

    def restore(self, rows: list[dict[str, float]]) -> None:
        """The rows of a resumed run (its checkpoint holds them; windows close at checkpoints)."""
        self.rows = [dict(row) for row in rows]

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
