"""Every random stream derives from the config's one master seed and a name.

A stream is named by strings, e.g. ("dataset", "control", "short") or ("init", "control", "3"),
so adding a stream never shifts another one, and a rule rerun alone draws exactly what it
drew inside the whole workflow.

The names are part of the reproducibility contract: renaming a stream changes every number drawn
from it. These are all of them (master seed from config `seed`):

    bellman   ("dataset", task, size)                          the SDE trajectory (make_trajectory)
              ("init" | "sampling", "reference", task, estimator)  Q*'s network and mini-batches
              ("init", task, setting, run seed)                   a run's network or swarm (run_method)
              ("sampling", task, setting, estimator, run seed)    its mini-batches and CBO noise
    agents    (agent, run seed, "env" | "acting" | "init" | "evaluation" | "rollout")
              ("mpo", "env" | "replay" | "sampling" | "init" | "evaluation" | "rollout", run seed)
    offline   ("offline", env id, run seed, purpose), purpose e.g. "init" + stage, "buffer-env"

The three studies order the parts differently; they stay as first published, so that every
result of the earlier layout repeats bit for bit.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported by torch_generator: the steps that draw with NumPy alone start faster
    import torch


def _key(names: tuple[str, ...]) -> list[int]:
    return [int.from_bytes(hashlib.sha256(str(n).encode()).digest()[:4], "little") for n in names]


def stream_seed(master: int, *names: str) -> int:
    """A 63-bit seed for the stream `names` under the master seed."""
    state = np.random.SeedSequence(master, spawn_key=_key(names)).generate_state(2, np.uint32)
    return (int(state[0]) | (int(state[1]) << 32)) >> 1


def numpy_rng(master: int, *names: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(stream_seed(master, *names)))


def torch_generator(master: int, *names: str) -> torch.Generator:
    import torch

    return torch.Generator().manual_seed(stream_seed(master, *names))
