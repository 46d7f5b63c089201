"""The Bellman loss both backends and both optimisers report: L = mean(j * j^) / 2 (mean(j^2) / 2 for DS,
where j^ = j); CBO minimises it, SGD steps along its gradient with j held fixed."""

from __future__ import annotations

import torch


def bellman_loss(j: torch.Tensor, j_hat: torch.Tensor) -> torch.Tensor:
    """L = mean(j * j^) / 2; one per row of j for several networks."""
    return (j * j_hat).mean(dim=-1) / 2.0
