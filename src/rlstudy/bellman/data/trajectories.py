"""The on-disk format of a trajectory: one folder, three .npy arrays of equal length.

    states.npy          float64 (n,)  s_0 .. s_{n-1}, unwrapped
    action_indices.npy  int8    (n,)  0 for a = -1, 1 for a = +1
    rewards.npy         float64 (n,)  the reward of the transition from s_m

A trajectory is checked wherever it is read (ours, or the authors' on import): equal lengths,
finite states and rewards, action indices 0 or 1; and, where the config's dynamics are known, its
rewards against its states for the configured reward_of.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_npy
from rlstudy.core.loaders import load_npy

from ..problem.sde import Dynamics, Trajectory

FILES = ("states", "action_indices", "rewards")
# Rewards lie in [0, 2]; float32 files round them to about 1e-7 (the authors' files: 9.5e-8).
REWARD_TOLERANCE = 1e-6


def dataset_dynamics(config: Mapping, dataset: str) -> dict:
    """The dynamics a dataset's runs assume: ours as configured; the authors' trajectories hold the
    reward of the current state, whatever config `problem.dynamics.reward_of` says of ours."""
    if dataset == "authors":
        return {**config["problem"]["dynamics"], "reward_of": "current"}
    return config["problem"]["dynamics"]


def trajectory_paths(folder: str | Path) -> dict[str, Path]:
    return {name: Path(folder) / f"{name}.npy" for name in FILES}


def save_trajectory(folder: str | Path, traj: Trajectory, record: dict | None) -> None:
    paths = trajectory_paths(folder)
    for name in FILES:
        save_npy(paths[name], getattr(traj, name), record)


def checked_trajectory(arrays: Mapping[str, np.ndarray], paths: Mapping[str, str | Path]) -> Trajectory:
    """The trajectory of the arrays states, action_indices and rewards, refusing what the methods
    cannot use; an error names the file each array came from (paths)."""
    n = len(arrays["states"])
    for name in FILES:
        array = arrays[name]
        if array.ndim != 1 or len(array) != n:
            raise InputError(f"{paths[name]}: expected shape ({n},) like the states, got {array.shape} ({name})")
        if array.dtype.kind not in "fiu":
            raise InputError(f"{paths[name]}: expected numeric {name}, got dtype {array.dtype}")
    if n < 3:
        raise InputError(f"{paths['states']}: a trajectory needs at least 3 states, got {n}")
    if not np.isfinite(arrays["states"]).all():
        raise InputError(f"{paths['states']}: states contain NaN or inf")
    # The last reward belongs to no transition (NaN with reward_of: next): it is never used.
    if not np.isfinite(arrays["rewards"][:-1]).all():
        raise InputError(f"{paths['rewards']}: rewards contain NaN or inf")
    if not np.isin(arrays["action_indices"], (0, 1)).all():
        raise InputError(f"{paths['action_indices']}: action indices must be 0 or 1")
    return Trajectory(arrays["states"].astype(np.float64), arrays["action_indices"].astype(np.int8),
                      arrays["rewards"].astype(np.float64))


def check_rewards(traj: Trajectory, dynamics: Dynamics, path: str | Path) -> None:
    """Refuse rewards that are not r = sin(s) + 1 of the state config 'problem.dynamics.reward_of' names:
    training on them would mix two conventions without a sign (the authors' files hold rewards
    of the current state)."""
    n = len(traj) - 1  # the rewards of the n transitions
    expected = dynamics.rewards(traj.states)[:n]
    off = np.abs(traj.rewards[:n] - expected) > REWARD_TOLERANCE
    if off.any():
        m = int(np.argmax(off))
        state = "s_m" if dynamics.reward_of == "current" else "s_{m+1}"
        other = dataclasses.replace(dynamics, reward_of="next" if dynamics.reward_of == "current" else "current")
        follows = (f"; they are those of reward_of: {other.reward_of}"
                   if np.allclose(traj.rewards[:n], other.rewards(traj.states)[:n], rtol=0, atol=REWARD_TOLERANCE)
                   else "")
        raise InputError(f"{path}: reward {m} is {traj.rewards[m]:.6g}, but config 'problem.dynamics.reward_of: "
                         f"{dynamics.reward_of}' makes it sin({state}) + 1 = {expected[m]:.6g}{follows}")


def load_trajectory(folder: str | Path, dynamics: Dynamics | None = None) -> Trajectory:
    """Load and check a trajectory folder, and its rewards against the dynamics when given;
    errors name the offending file."""
    paths = trajectory_paths(folder)
    traj = checked_trajectory({name: load_npy(paths[name], f"trajectory {name}") for name in FILES}, paths)
    if dynamics is not None:
        check_rewards(traj, dynamics, paths["rewards"])
    return traj
