"""The on-disk format of a trajectory: one folder, three .npy arrays of equal length.

    states.npy          float64 (n,)  s_0 .. s_{n-1}, unwrapped
    action_indices.npy  int8    (n,)  0 for a = -1, 1 for a = +1
    rewards.npy         float64 (n,)  the reward of the transition from s_m
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlstudy.core.errors import InputError
from rlstudy.core.io import load_npy, save_npy

from .sde import Trajectory

FILES = ("states", "action_indices", "rewards")


def trajectory_paths(folder: str | Path) -> dict[str, Path]:
    return {name: Path(folder) / f"{name}.npy" for name in FILES}


def save_trajectory(folder: str | Path, traj: Trajectory, record: dict | None) -> None:
    paths = trajectory_paths(folder)
    for name in FILES:
        save_npy(paths[name], getattr(traj, name), record)


def load_trajectory(folder: str | Path) -> Trajectory:
    """Load and check a trajectory folder; errors name the offending file."""
    paths = trajectory_paths(folder)
    arrays = {name: load_npy(paths[name], f"trajectory {name}") for name in FILES}
    n = len(arrays["states"])
    for name, array in arrays.items():
        if array.ndim != 1 or len(array) != n:
            raise InputError(f"{paths[name]}: expected shape ({n},) like states.npy, got {array.shape}")
        if array.dtype.kind not in "fiu":
            raise InputError(f"{paths[name]}: expected a numeric array, got dtype {array.dtype}")
    if n < 3:
        raise InputError(f"{paths['states']}: a trajectory needs at least 3 states, got {n}")
    if not np.isfinite(arrays["states"]).all():
        raise InputError(f"{paths['states']}: contains NaN or inf")
    if not np.isin(arrays["action_indices"], (0, 1)).all():
        raise InputError(f"{paths['action_indices']}: action indices must be 0 or 1")
    return Trajectory(arrays["states"].astype(np.float64), arrays["action_indices"].astype(np.int8),
                      arrays["rewards"].astype(np.float64))
