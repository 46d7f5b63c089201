"""What a residual estimator is: the record each estimator module fills in (the registry: __init__.py).

An estimator supplies the second next state s^_{m+1} of the transitions it draws (residuals.py says
why one is needed), which start indices m it may draw from, and how many network evaluations a
transition costs it; and, for the error budget, what its residual product j j^ is in expectation
(budget/population.py). Everything else (the residuals, SGD's step, CBO's loss) is shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..problem.sde import Dynamics

if TYPE_CHECKING:  # the registry is read by steps that never touch a tensor (figures): no torch import for them
    import torch


@dataclass(frozen=True)
class Draw:
    """What a second next state may be made of, for m transitions, in either library: tensors (SGD's
    and CBO's batches: TensorDraw) or NumPy arrays (the budget's sampled residual: ArrayDraw). An
    estimator's second_state reads the states through `following` and draws through `uniforms` and
    `normals`, so that one function serves both, and each keeps the bits it always had."""

    states: torch.Tensor | np.ndarray  # float64 (n,): the whole trajectory
    starts: torch.Tensor | np.ndarray  # int64 (m,): the start indices m
    s: torch.Tensor | np.ndarray  # float64 (m,): s_m
    action_indices: torch.Tensor | np.ndarray  # int64 (m,): a_m
    task: str
    dynamics: Dynamics
    ur_action: str  # the optimiser's `ur_action`: how a resampled state picks its action

    def following(self, k: int):
        """s_{m+k} of every transition."""
        raise NotImplementedError

    def uniforms(self):
        """m uniforms on [0, 1), float64."""
        raise NotImplementedError

    def normals(self):
        """m standard normals, float64."""
        raise NotImplementedError

    def signs(self, plus):
        """The actions +-1.0 (float64) of action indices, or of booleans "a = +1" (index 1 is a = +1)."""
        raise NotImplementedError


@dataclass(frozen=True)
class TensorDraw(Draw):
    """A Draw on tensors on the trajectory's device; the random stream lives on the CPU, so a run
    draws the same numbers on any device."""

    generator: torch.Generator = None
    ahead: torch.Tensor | None = None  # float64 (m, 2): s_{m+1}, s_{m+2} where already gathered (a batch's rows)

    def following(self, k: int):
        if self.ahead is not None:
            return self.ahead[:, k - 1].contiguous()
        # index_select: 3x faster than tensor[index] here, and this runs every step.
        return self.states.index_select(0, self.starts + k)

    def uniforms(self):
        import torch

        return torch.rand(self.s.shape, generator=self.generator, dtype=torch.float64).to(self.states.device)

    def normals(self):
        import torch

        return torch.randn(self.s.shape, generator=self.generator, dtype=torch.float64).to(self.states.device)

    def signs(self, plus):
        import torch

        return plus.to(torch.float64) * 2.0 - 1.0


@dataclass(frozen=True)
class ArrayDraw(Draw):
    """A Draw on NumPy arrays, its random numbers from a NumPy generator."""

    rng: np.random.Generator = None

    def following(self, k: int):
        return self.states[self.starts + k]

    def uniforms(self):
        return self.rng.random(len(self.s))

    def normals(self):
        return self.rng.standard_normal(len(self.s))

    def signs(self, plus):
        return np.asarray(plus, dtype=np.float64) * 2.0 - 1.0


@dataclass(frozen=True)
class GridResidual:
    """What an estimator's population residual is made of, on the budget's grid of n states
    (budget/population.py): the next state's target split as target(s') = c(s) + g(s'), and the
    exact expectation over the transition kernel of each action."""

    q: torch.Tensor  # Q(s, a), (n, 2)
    c: torch.Tensor  # the part of the target fixed by s, (n, 1)
    g: torch.Tensor  # the part that depends on s' (on the grid), (n,)
    expected: torch.Tensor  # E_a[g(s')], (n, 2)
    expect: Callable[[torch.Tensor], torch.Tensor]  # f on the grid (n,) -> E[f(s') | s, a], (n, 2)
    behaviour: torch.Tensor  # mu(a|s) of the data's behaviour policy, (n, 2)
    fresh_probs: torch.Tensor  # pi(a|s) of an action drawn afresh at s (UR with ur_action policy), (n, 2)
    ur_action: str


@dataclass(frozen=True)
class Estimator:
    """One residual estimator: its name (in config, file names, tables and figures) and what it samples."""

    name: str
    samples: str  # one line: what its second next state is (the docs' table, --help)
    second_state: Callable[[Draw], torch.Tensor | None]  # s^_{m+1}; None: s_{m+1} itself (then j^ = j)
    lookahead: int  # states after s_m it reads: 1 (s_{m+1}) or 2 (s_{m+2}, borrowed from the future)
    rows_per_sample: int  # network evaluations per transition: Q at s_m and s^_{m+1}, and at s_{m+1} if it differs
    # (start indices, action indices on the CPU) -> the starts kept; None keeps every usable start
    start_filter: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None
    # E[j j^ | s, a] written out on the budget's grid, (n, 2); None: no population residual (the budget
    # refuses the estimator by name)
    population_terms: Callable[[GridResidual], torch.Tensor] | None = None
    # P(a start at (s, a) passes start_filter), (n, 2); None: every start is kept
    population_kept: Callable[[GridResidual], torch.Tensor] | None = None

    def usable_starts(self, n_states: int) -> int:
        """How many start indices m have all the states the estimator reads."""
        return n_states - self.lookahead

    def start_pool(self, action_indices: torch.Tensor) -> torch.Tensor:
        """The start indices m the estimator draws its transitions from (on the CPU)."""
        import torch

        pool = torch.arange(self.usable_starts(len(action_indices)))
        if self.start_filter is not None:
            pool = self.start_filter(pool, action_indices.cpu())
        return pool
