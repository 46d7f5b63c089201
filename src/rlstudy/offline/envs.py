"""Environments of the offline chain: any discrete-action gymnasium id; Atari ids through ale-py.

Atari games get the notebook's preprocessing: frame skip 4 with the max over the last two frames,
84x84 greyscale, a 4-frame history (zeros before the episode's first frame), at most 27e3 agent
steps per episode, no terminal on life loss. Rewards stay unclipped here: evaluation reports game
scores, and the learners clip what they store (`EnvInfo.clip_rewards`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import ale_py
import gymnasium as gym
import numpy as np

from rlstudy.core.errors import InputError

gym.register_envs(ale_py)


@dataclass(frozen=True)
class AtariPreprocessing:
    """Config 'offline.atari_preprocessing' (the notebook's `atari_preprocessing` dictionary)."""
    SCHEMA: ClassVar[str] = "atari_preprocessing"  # its definition in workflow/schemas/config.schema.yaml
    frame_skip: int
    frame_size: int
    history: int  # frames per state
    max_episode_steps: int  # agent steps
    reward_clipping: bool  # learners see rewards clipped to [-1, 1]


@dataclass(frozen=True)
class EnvInfo:
    """What the learners need to know about an environment."""
    env_id: str
    is_atari: bool
    observation_shape: tuple[int, ...]  # of one frame (Atari) or one observation
    history: int                        # observations per state: 4 for Atari, 1 otherwise
    num_actions: int
    clip_rewards: bool

    @property
    def state_shape(self) -> tuple[int, ...]:
        return (self.history, *self.observation_shape) if self.history > 1 else self.observation_shape


def is_atari(env_id: str) -> bool:
    return _spec(env_id).entry_point == "ale_py.env:AtariEnv"


def _spec(env_id: str):
    if "/" in env_id:
        raise InputError(f"config 'offline.environments': {env_id!r} contains '/', which cannot be a path "
                         "wildcard; use the NoFrameskip-v4 id of the game (e.g. PongNoFrameskip-v4)")
    try:
        return gym.spec(env_id)
    except gym.error.Error as err:
        raise InputError(f"config 'offline.environments': unknown gymnasium id {env_id!r} ({err})") from err


def make_env(env_id: str, atari: AtariPreprocessing) -> tuple[gym.Env, EnvInfo]:
    """The environment (unseeded: seed it with reset(seed=...)) and its description.

    Observations of Atari games are (history, 84, 84) uint8 stacks, oldest frame first."""
    if is_atari(env_id):
        spec = _spec(env_id)
        if spec.kwargs.get("frameskip", 1) != 1:
            raise InputError(f"config 'offline.environments': {env_id!r} skips frames itself; "
                             "use its NoFrameskip-v4 id so the preprocessing does the skipping")
        env = gym.make(env_id, max_episode_steps=atari.max_episode_steps)
        env = gym.wrappers.AtariPreprocessing(env, noop_max=0, frame_skip=atari.frame_skip,
                                              screen_size=atari.frame_size, terminal_on_life_loss=False,
                                              grayscale_obs=True, scale_obs=False)
        env = gym.wrappers.FrameStackObservation(env, atari.history, padding_type="zero")
        shape, history, clip = (atari.frame_size, atari.frame_size), atari.history, atari.reward_clipping
    else:
        env = gym.make(_spec(env_id).id)
        if not isinstance(env.observation_space, gym.spaces.Box) or len(env.observation_space.shape) != 1:
            raise InputError(f"config 'offline.environments': {env_id!r} has observations "
                             f"{env.observation_space}; the MLP networks need a flat Box")
        shape, history, clip = env.observation_space.shape, 1, False
    if not isinstance(env.action_space, gym.spaces.Discrete):
        raise InputError(f"config 'offline.environments': {env_id!r} has action space {env.action_space}; "
                         "DQN and BCQ need a Discrete one")
    return env, EnvInfo(env_id, is_atari(env_id), tuple(shape), history, int(env.action_space.n), clip)


def newest_frame(observation: np.ndarray, info: EnvInfo) -> np.ndarray:
    """The part of an observation the buffer stores: the last frame of an Atari stack, else all of it."""
    return observation[-1] if info.history > 1 else observation


def learning_reward(reward: float, info: EnvInfo) -> float:
    return float(np.clip(reward, -1.0, 1.0)) if info.clip_rewards else float(reward)
