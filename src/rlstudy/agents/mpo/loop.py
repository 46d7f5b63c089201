"""MPO's loop: uniform random actions, then the policy's; every transition into the agents' replay
buffer; `updates_per_step` updates per step after `learning_starts`; a diagnostics row every
`log_every` steps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.errors import DivergenceError
from rlstudy.core.progress import progress

from ..replay import ReplayBuffer
from .config import MPOParams
from .learner import MPO


@dataclass
class TrainingResult:
    returns: pd.DataFrame       # episode, step, return
    diagnostics: pd.DataFrame   # step, then the means of `MPO.update`'s values over the rows' window
    agent: MPO


def train(env, params: MPOParams, device: torch.device, env_seed: int, rng: np.random.Generator,
          generator: torch.Generator, label: str, log: DiagnosticsLog | None = None) -> TrainingResult:
    """Train on `env` (a Box action space) for params.total_steps environment steps; `update`'s
    statistics go to `log` (a new one by default), a row every params.log_every steps."""
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    low, high = env.action_space.low.astype(np.float32), env.action_space.high.astype(np.float32)
    agent = MPO(obs_dim, act_dim, low, high, params, device, generator)
    # Beyond the other agents' fields, MPO keeps the raw (unclipped) action and its log-probability
    # under the behaviour policy (Retrace's importance weights), and the episode end (terminated or
    # truncated: where a Retrace sequence stops).
    replay = ReplayBuffer(min(params.buffer_size, params.total_steps), (obs_dim,), (act_dim,),
                          extras={"actions_raw": (act_dim,), "ends": (), "behaviour_log_probs": ()})
    uniform_logp = -float(np.log(high - low).sum())
    length = params.retrace_steps if params.use_retrace else 1
    log = DiagnosticsLog() if log is None else log
    episodes = []
    obs, _ = env.reset(seed=env_seed)
    episode_return, window_skipped = 0.0, 0
    bar = progress(range(1, params.total_steps + 1), desc=label)
    for step in bar:
        if step <= params.learning_starts:
            action = rng.uniform(low, high).astype(np.float32)
            raw, logp = action, uniform_logp
        else:
            action, raw, logp = agent.act(obs, greedy=False)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        replay.add(obs, action, reward, next_obs, terminated,
                   actions_raw=raw, ends=terminated or truncated, behaviour_log_probs=logp)
        obs, episode_return = next_obs, episode_return + float(reward)
        if terminated or truncated:
            episodes.append((len(episodes) + 1, step, episode_return))  # numbered from 1, as every agent
            bar.set_postfix(episode=len(episodes), last_return=f"{episode_return:.1f}", refresh=False)
            obs, _ = env.reset()
            episode_return = 0.0
        if step > params.learning_starts and replay.size >= length:
            for _ in range(params.updates_per_step):
                info = agent.update(replay.sample_sequences(params.batch_size, length, rng))
                if info is None:
                    window_skipped += 1
                else:
                    log.add(info)
        if step % params.log_every == 0 and (len(log) or window_skipped):
            if not len(log):
                raise DivergenceError(f"{label}: every batch of the {window_skipped} updates before step {step} "
                                      "had non-finite values")
            log.write("step", step, skipped_nonfinite_batches=agent.skipped_nonfinite_batches)
            window_skipped = 0
    returns = pd.DataFrame(episodes, columns=["episode", "step", "return"])
    return TrainingResult(returns, log.frame(), agent)
