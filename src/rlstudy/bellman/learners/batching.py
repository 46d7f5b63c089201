"""The notebook's epoch scheme, shared by SGD (mini-batches of transitions) and CBO (batches of
particles): each epoch shuffles the items, prepends those left over from the previous epoch and cuts
as many full batches as fit; the rest carries over."""

from __future__ import annotations

from typing import Callable

import torch


def epoch_batches(n_items: int, batch_size: int, remainder: torch.Tensor,
                  generator: torch.Generator) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Full mini-batches of one epoch, and the indices carried over to the next."""
    order = torch.cat([remainder, torch.randperm(n_items, generator=generator)])
    n_full = len(order) // batch_size
    batches = list(order[:n_full * batch_size].view(n_full, batch_size)) if n_full else []
    return batches, order[n_full * batch_size:]


def start_lookup(pool: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """positions -> start indices, for a pool of starts in increasing order (estimators/base.start_pool):
    the positions themselves where the pool is 0..n-1 (every start usable: DS, UR, BFF), the pool's
    entries at them otherwise. Gathering 10,000 random entries of a 1e6-long pool cost about 0.6 ms of
    a 12 ms SGD mini-batch (its reads miss the cache)."""
    if len(pool) and int(pool[-1]) == len(pool) - 1:  # n increasing starts from 0 whose last is n - 1: 0..n-1
        return lambda positions: positions
    return pool.__getitem__
