"""Checkpoints of long runs: one file written atomically, resumed only by the same run.

A checkpoint holds the learner, the random states (numpy, torch, and the pickled environment
with its own generator), and the loop's progress, so a resumed run draws exactly what an
uninterrupted one would. Its `fingerprint` (the run's parameters as JSON) must match: a
checkpoint left by a run with other parameters is ignored. The environment is restored with
pickle: a checkpoint is a file this run wrote itself, never one from elsewhere.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np
import torch

from rlstudy.core.io import write_artefact


def pickled(value) -> torch.Tensor:
    return torch.frombuffer(bytearray(pickle.dumps(value)), dtype=torch.uint8)


def unpickled(tensor: torch.Tensor):
    return pickle.loads(tensor.numpy().tobytes())


def random_states(rng: np.random.Generator) -> dict:
    return {"numpy": pickled(rng.bit_generator.state), "torch": torch.get_rng_state()}


def restore_random_states(states: dict, rng: np.random.Generator) -> None:
    rng.bit_generator.state = unpickled(states["numpy"])
    torch.set_rng_state(states["torch"])


def save_checkpoint(path: str | Path, fingerprint: str, state: dict) -> None:
    buffer = io.BytesIO()
    torch.save({"fingerprint": fingerprint, **state}, buffer)
    write_artefact(path, buffer.getvalue(), None)


def load_checkpoint(path: str | Path, fingerprint: str) -> dict | None:
    """The checkpoint's state, or None when there is none or it belongs to other parameters."""
    path = Path(path)
    if not path.is_file():
        return None
    state = torch.load(path, weights_only=True)
    if state.pop("fingerprint") != fingerprint:
        print(f"ignoring {path}: written by a run with other parameters")
        return None
    print(f"resuming from {path}")
    return state
