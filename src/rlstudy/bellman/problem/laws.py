"""The circle MDP's policy and reward, written once (docs/bellman.md, "The reference layer").

    pi(a=+1 | s) = 1/2 + sin(s)/5      the evaluation policy (evaluation's data and its target)
    pi(a=+1 | s) = 1/2                 the uniform policy (control's behaviour)
    r(s)         = sin(s) + 1

Every caller goes through these functions, on whatever it holds: a Python float, a NumPy array or a
tensor (each kept in its own library, so that no caller's bits change), or the sine itself where a
caller has it already (the network's input feature sin s: `evaluation_plus`, `reward_of_sine`).
No torch import here: the figures' steps read the MDP without it.
"""

from __future__ import annotations

import numpy as np

POLICIES = ("evaluation", "uniform")


def sine(s):
    """sin(s) in the library s lives in: a tensor's own sin, else NumPy's (floats included)."""
    if hasattr(s, "sin"):  # a torch.Tensor (NumPy arrays have no .sin method)
        return s.sin()
    return np.sin(s)


def evaluation_plus(sin_s):
    """pi(a=+1|s) = 1/2 + sin(s)/5 of the evaluation policy, from sin(s)."""
    return 0.5 + sin_s / 5.0


def prob_plus(policy: str, s):
    """pi(a=+1 | s) for the named policy; works on floats, arrays and tensors."""
    if policy == "evaluation":
        return evaluation_plus(sine(s))
    if policy == "uniform":
        return 0.5 + 0.0 * s
    raise ValueError(f"unknown policy {policy!r}; allowed: {', '.join(map(repr, POLICIES))}")


def reward_of_sine(sin_s):
    """r(s) = sin(s) + 1, from sin(s)."""
    return sin_s + 1.0


def reward(s):
    """r(s) = sin(s) + 1, the reward of a state (its transition's, or the one before's: Dynamics.reward_of)."""
    return reward_of_sine(sine(s))
