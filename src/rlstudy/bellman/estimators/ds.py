"""DS, "double sampling" without the second sample: s^_{m+1} = s_{m+1}, so j^ = j (biased by the
variance of the noise: E[j^2] = residual^2 + Var(j | s_m, a_m))."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Estimator, GridResidual

if TYPE_CHECKING:
    import torch


def population_terms(grid: GridResidual) -> torch.Tensor:
    """E_a[(c + g(s') - Q)^2], computed as an expectation, not as (TQ - Q)^2 plus a variance."""
    return (grid.c - grid.q) ** 2 + 2.0 * (grid.c - grid.q) * grid.expected + grid.expect(grid.g ** 2)


DS = Estimator("DS", "s_{m+1} itself (no second sample)", second_state=lambda draw: None, lookahead=1,
               rows_per_sample=2, population_terms=population_terms)
