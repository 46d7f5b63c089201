"""Greedy rollouts rendered offscreen, saved as a GIF (the notebooks show them on a canvas)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

from rlstudy.core.atomic_writes import write_artefact


def greedy_rollout(env, act: Callable[[np.ndarray], object], seed: int, max_steps: int):
    """Run `act` from env.reset(seed=seed) for at most max_steps; return frames, observations, rewards.

    `env` must be made with render_mode="rgb_array". The episode ends on termination or truncation.
    """
    observation, _ = env.reset(seed=seed)
    frames, observations, rewards = [env.render()], [observation], []
    for _ in range(max_steps):
        observation, reward, terminated, truncated, _ = env.step(act(observation))
        frames.append(env.render())
        observations.append(observation)
        rewards.append(float(reward))
        if terminated or truncated:
            break
    return frames, np.asarray(observations), np.asarray(rewards)


def save_gif(path: str | Path, frames: list[np.ndarray], fps: int = 30, every: int = 1, record: dict | None = None) -> None:
    """Write frames[::every] as a looping GIF, atomically (PIL writes no timestamp: reruns are byte-identical)."""
    if not frames:
        raise ValueError(f"{path}: no frames to save")
    images = [Image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames[::every]]
    buffer = io.BytesIO()
    images[0].save(buffer, format="GIF", save_all=True, append_images=images[1:], duration=int(1000 * every / fps), loop=0)
    write_artefact(path, buffer.getvalue(), record)
