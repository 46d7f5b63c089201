"""The replay buffer: every observation stored once, states rebuilt from history at sampling time.

Observations of an episode lie consecutively in `frames`: o_0, o_1, ..., o_T (its last one
included, so a truncated episode's final transition can bootstrap). Transition i points at the
frame of its state (`frame[i]`) and knows its step in the episode (`step[i]`); its next state is
frame[i] + 1. A state of history H is the frames frame-H+1 .. frame, oldest first, with zeros for
positions before the episode's first frame: no frame of one episode leaks into the next. For
Atari (H = 4, uint8 84x84 frames) that keeps 1e6 transitions in about 7 GB; for H = 1 a state is
one observation.

`terminal` marks a failure ending only: a time-limit truncation is stored as not terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_npy
from rlstudy.core.loaders import load_npy

from .envs import EnvInfo

ARRAYS = ("frames", "frame", "step", "action", "reward", "terminal")


@dataclass
class Batch:
    states: torch.Tensor
    actions: torch.Tensor      # (B,) int64
    rewards: torch.Tensor      # (B,) float32, as learned from (clipped for Atari)
    next_states: torch.Tensor
    not_done: torch.Tensor     # (B,) float32, 0 after a terminal transition

    def to(self, device: torch.device) -> "Batch":
        return Batch(*(t.to(device) for t in (self.states, self.actions, self.rewards, self.next_states,
                                                self.not_done)))


class ReplayBuffer:
    def __init__(self, info: EnvInfo, capacity: int = 1024):
        dtype = np.uint8 if info.is_atari else np.float32
        self.history = info.history
        self.frames = np.zeros((capacity, *info.observation_shape), dtype=dtype)
        self.frame = np.zeros(capacity, dtype=np.int64)
        self.step = np.zeros(capacity, dtype=np.int64)
        self.action = np.zeros(capacity, dtype=np.int64)
        self.reward = np.zeros(capacity, dtype=np.float32)
        self.terminal = np.zeros(capacity, dtype=np.uint8)
        self.size = 0          # transitions
        self.n_frames = 0
        self.episode_step = 0  # step in the current episode of the next transition

    def __len__(self) -> int:
        return self.size

    def start_episode(self, frame: np.ndarray) -> None:
        self._append_frame(frame)
        self.episode_step = 0

    def add(self, action: int, reward: float, terminal: bool, next_frame: np.ndarray) -> None:
        """The transition from the latest frame; next_frame is the newest frame of the next state."""
        if self.size == len(self.action):
            for name in ARRAYS[1:]:
                setattr(self, name, _grown(getattr(self, name)))
        i = self.size
        self.frame[i], self.step[i] = self.n_frames - 1, self.episode_step
        self.action[i], self.reward[i], self.terminal[i] = action, reward, terminal
        self.size += 1
        self.episode_step += 1
        self._append_frame(next_frame)

    def _append_frame(self, frame: np.ndarray) -> None:
        if self.n_frames == len(self.frames):
            self.frames = _grown(self.frames)
        self.frames[self.n_frames] = frame
        self.n_frames += 1

    def states(self, frame: np.ndarray, step: np.ndarray) -> np.ndarray:
        """States ending at the given frames, `step` steps into their episodes."""
        if self.history == 1:
            return self.frames[frame]
        offsets = np.arange(1 - self.history, 1)                # oldest first
        index = frame[:, None] + offsets
        before_start = (step[:, None] + offsets) < 0
        stacks = self.frames[np.maximum(index, 0)]
        stacks[before_start] = 0
        return stacks

    def batch(self, index: np.ndarray) -> Batch:
        frame, step = self.frame[index], self.step[index]
        return Batch(torch.from_numpy(self.states(frame, step)),
                     torch.from_numpy(self.action[index]),
                     torch.from_numpy(self.reward[index]),
                     torch.from_numpy(self.states(frame + 1, step + 1)),
                     torch.from_numpy(1.0 - self.terminal[index].astype(np.float32)))

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
        return self.batch(rng.integers(0, self.size, size=batch_size))

    def arrays(self) -> dict[str, np.ndarray]:
        """The filled part of every array, and where the current episode stands."""
        values = {name: getattr(self, name)[:self.size] for name in ARRAYS[1:]}
        return {"frames": self.frames[:self.n_frames], **values,
                "cursor": np.array([self.episode_step], dtype=np.int64)}

    @classmethod
    def from_arrays(cls, info: EnvInfo, arrays: dict[str, np.ndarray], where: str) -> "ReplayBuffer":
        """The buffer of arrays() (a saved buffer's, a checkpoint's), once check_arrays accepts them."""
        check_arrays(info, arrays, where)
        frames = arrays["frames"]
        buffer = cls(info, capacity=1)
        buffer.frames = np.array(frames, dtype=buffer.frames.dtype)
        for name in ARRAYS[1:]:
            setattr(buffer, name, np.array(arrays[name], dtype=getattr(buffer, name).dtype))
        buffer.size, buffer.n_frames = len(buffer.action), len(buffer.frames)
        buffer.episode_step = int(arrays["cursor"][0])
        return buffer

    def save(self, folder: str | Path, record: dict) -> None:
        for name, array in self.arrays().items():
            save_npy(Path(folder) / f"{name}.npy", array, record)

    @classmethod
    def load(cls, folder: str | Path, info: EnvInfo) -> "ReplayBuffer":
        arrays = {name: load_npy(Path(folder) / f"{name}.npy", f"buffer array '{name}'")
                  for name in (*ARRAYS, "cursor")}
        return cls.from_arrays(info, arrays, str(folder))


def check_arrays(info: EnvInfo, arrays: dict[str, np.ndarray], where: str) -> None:
    """Refuse, naming `where` and the array, arrays that no buffer of this environment could hold:
    missing ones, other shapes or dtypes, lengths that disagree, non-finite frames or rewards, and
    indices out of range (an action id, a frame whose successor is not stored, the cursor)."""
    def refuse(name: str, problem: str):
        raise InputError(f"{where} ({name}): {problem}; rerun the rule that writes it")

    missing = sorted({*ARRAYS, "cursor"} - set(arrays))
    if missing:
        refuse(", ".join(missing), "missing")
    frames = arrays["frames"]
    if frames.shape[1:] != info.observation_shape:
        refuse("frames", f"frames of shape {frames.shape[1:]}, but {info.env_id} observations have shape "
                         f"{info.observation_shape}")
    if frames.dtype.kind not in ("u" if info.is_atari else "f"):
        refuse("frames", f"dtype {frames.dtype}")
    shapes = {name: arrays[name].shape for name in ARRAYS[1:]}
    n = len(arrays["action"])
    if any(shape != (n,) for shape in shapes.values()):
        refuse(", ".join(ARRAYS[1:]), f"lengths differ: {shapes}")
    for name in ARRAYS[1:]:
        if arrays[name].dtype.kind not in ("f" if name == "reward" else "iub"):
            refuse(name, f"dtype {arrays[name].dtype}")
    for name in ("frames", "reward"):
        if arrays[name].dtype.kind == "f" and not np.isfinite(arrays[name]).all():
            refuse(name, "NaN or inf")
    checks = {
        "action": (arrays["action"], 0, info.num_actions - 1),
        "frame": (arrays["frame"], 0, len(frames) - 2),  # a transition's next state is frame + 1
        "step": (arrays["step"], 0, np.inf),
        "terminal": (arrays["terminal"], 0, 1),
    }
    for name, (values, low, high) in checks.items():
        if n and not (low <= values.min() and values.max() <= high):
            refuse(name, f"values {values.min()}..{values.max()} outside [{low}, {high}]")
    cursor = arrays["cursor"]
    if cursor.shape != (1,) or cursor.dtype.kind not in "iu":
        refuse("cursor", f"shape {cursor.shape} and dtype {cursor.dtype}, expected one integer")
    # The step of the current episode's next transition: 0 right after an episode started.
    if not (cursor[0] == 0 or (n and cursor[0] == arrays["step"][-1] + 1)):
        refuse("cursor", f"{cursor[0]} does not follow the last transition's step")


def buffer_files(folder: str | Path) -> dict[str, Path]:
    return {name: Path(folder) / f"{name}.npy" for name in (*ARRAYS, "cursor")}


def _grown(array: np.ndarray) -> np.ndarray:
    grown = np.zeros((2 * len(array), *array.shape[1:]), dtype=array.dtype)
    grown[:len(array)] = array
    return grown
