"""MPO's environment: the agents' set-up (agents/episodes.py), a continuous action space and flat observations."""

from __future__ import annotations

import gymnasium as gym

from rlstudy.core.errors import InputError

from ..episodes import make_env as make_agent_env


def make_env(env_id: str, render_mode: str | None = None) -> gym.Env:
    """The agents' environment set-up (config key 'mpo.env' in its errors) with a continuous (Box)
    action space, and flat observations."""
    env = make_agent_env(env_id, gym.spaces.Box, "mpo", render_mode=render_mode)
    if len(env.observation_space.shape) != 1:
        env.close()
        raise InputError(f"config 'mpo.env': MPO needs flat observations; {env_id!r} has {env.observation_space}")
    return env
