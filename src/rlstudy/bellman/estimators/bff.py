"""BFF, borrowing from the future: s^_{m+1} = s_m + (s_{m+2} - s_{m+1}); and BFF-matched, BFF on the
transitions whose next action repeats the action (a_{m+1} = a_m), where the increment has the right law."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Draw, Estimator, GridResidual

if TYPE_CHECKING:
    import torch


def borrowed_state(draw: Draw):
    return draw.s + (draw.following(2) - draw.following(1))


def matched_actions(pool: torch.Tensor, action_indices: torch.Tensor) -> torch.Tensor:
    """The starts whose next action repeats the action."""
    return pool[action_indices[pool + 1] == action_indices[pool]]


def action_terms(grid: GridResidual, b: int) -> torch.Tensor:
    """The increment of action b, drawn at s1 by the behaviour policy mu:
    E_a[(c + g(s1) - Q) mu(b|s1)] (E_b[c + g(s^)] - Q(s, a)), (n, 2)."""
    mu_b = grid.behaviour[:, b]
    first = (grid.c - grid.q) * grid.expect(mu_b) + grid.expect(grid.g * mu_b)
    second = grid.c + grid.expected[:, b:b + 1] - grid.q
    return first * second


def population_terms(grid: GridResidual) -> torch.Tensor:
    """Sum over the borrowed increment's action b of action_terms."""
    result = grid.q.new_zeros(grid.q.shape)
    for b in range(grid.q.shape[1]):
        result = result + action_terms(grid, b)
    return result


def matched_population_terms(grid: GridResidual) -> torch.Tensor:
    """The b = a term alone (the budget divides by the match probability, population_kept)."""
    result = grid.q.new_zeros(grid.q.shape)
    for b in range(grid.q.shape[1]):
        result[:, b] = action_terms(grid, b)[:, b]
    return result


def matched_share(grid: GridResidual) -> torch.Tensor:
    """P(a_{m+1} = a_m | s_m, a_m) = E_a[mu(a|s1)], (n, 2)."""
    import torch

    return torch.stack([grid.expect(grid.behaviour[:, b])[:, b] for b in range(grid.q.shape[1])], dim=1)


BFF = Estimator("BFF", "s_m plus the next increment s_{m+2} - s_{m+1}", second_state=borrowed_state,
                lookahead=2, rows_per_sample=3, population_terms=population_terms)
BFF_MATCHED = Estimator("BFF-matched", "BFF on the transitions with a_{m+1} = a_m only",
                        second_state=borrowed_state, lookahead=2, rows_per_sample=3, start_filter=matched_actions,
                        population_terms=matched_population_terms, population_kept=matched_share)
