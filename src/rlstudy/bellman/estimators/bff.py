"""BFF, borrowing from the future: s^_{m+1} = s_m + (s_{m+2} - s_{m+1}); and BFF-matched, BFF on the
transitions whose next action repeats the action (a_{m+1} = a_m), where the increment has the right law."""

import torch

from .base import Draw, Estimator


def borrowed_state(draw: Draw) -> torch.Tensor:
    following = draw.starts + 1
    return draw.s + (draw.states.index_select(0, draw.starts + 2) - draw.states.index_select(0, following))


def matched_actions(pool: torch.Tensor, action_indices: torch.Tensor) -> torch.Tensor:
    """The starts whose next action repeats the action."""
    return pool[action_indices[pool + 1] == action_indices[pool]]


BFF = Estimator("BFF", "s_m plus the next increment s_{m+2} - s_{m+1}", second_state=borrowed_state,
                lookahead=2, rows_per_sample=3)
BFF_MATCHED = Estimator("BFF-matched", "BFF on the transitions with a_{m+1} = a_m only",
                        second_state=borrowed_state, lookahead=2, rows_per_sample=3, start_filter=matched_actions)
