"""The notebook's epoch scheme, shared by SGD (mini-batches of transitions) and CBO (batches of
particles): each epoch shuffles the items, prepends those left over from the previous epoch and cuts
as many full batches as fit; the rest carries over."""

from __future__ import annotations

import torch


def epoch_batches(n_items: int, batch_size: int, remainder: torch.Tensor,
                  generator: torch.Generator) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Full mini-batches of one epoch, and the indices carried over to the next."""
    order = torch.cat([remainder, torch.randperm(n_items, generator=generator)])
    n_full = len(order) // batch_size
    batches = list(order[:n_full * batch_size].view(n_full, batch_size)) if n_full else []
    return batches, order[n_full * batch_size:]
