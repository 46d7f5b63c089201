"""The three loops of the chain: online (behavioural) training, buffer generation, offline training.

The online and offline loops evaluate every `eval_every` steps (updates) and at the end, and
write a checkpoint after each evaluation but the last; started again with the same checkpoint path and
fingerprint, they resume from it and finish exactly as an uninterrupted run. A checkpoint that does
not fit the run is ignored with a warning (checkpoint.resume) and the run starts afresh. At each
evaluation the updates' statistics since the previous one become a row of the diagnostics (the
checkpoint keeps them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch

from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.progress import progress

from .buffer import ReplayBuffer
from .checkpoint import (
    checked_progress,
    env_state,
    random_states,
    restore_env_state,
    restore_random_states,
    resume,
    save_checkpoint,
)
from .double_dqn import Learner
from .envs import EnvInfo, learning_reward, newest_frame
from .evaluation import EVALUATION_COLUMNS

Evaluate = Callable[..., np.ndarray]  # (learner, final=...): the returns of an evaluation


def _evaluation_row(iteration: int, returns: np.ndarray) -> list[float]:
    return [iteration, float(returns.mean()), float(returns.std()), len(returns)]


def _is_evaluation(done: int, every: int, total: int) -> bool:
    return done % every == 0 or done == total


def train_online(learner: Learner, env, info: EnvInfo, steps: int, env_seed: int, rng: np.random.Generator,
                 evaluate: Evaluate, checkpoint: Path, fingerprint: str, desc: str,
                 log: DiagnosticsLog | None = None) -> pd.DataFrame:
    """Epsilon-greedy DQN training for `steps` env steps; the evaluation series. The updates'
    statistics, with the exploration rate, go to `log` (a new one by default)."""
    params = learner.params
    log = DiagnosticsLog() if log is None else log

    def restore(saved: dict):
        start, rows = checked_progress(saved, "step", steps, params.eval_every)
        episode_return = float(saved["episode_return"])
        observation = saved["state"].numpy()
        if not (np.isfinite(episode_return) and env.observation_space.contains(observation)):
            raise ValueError("the episode's return or observation is not one of this environment")
        learner.load_state_dict(saved["learner"])
        buffer = ReplayBuffer.from_arrays(info, {k: v.numpy() for k, v in saved["buffer"].items()}, str(checkpoint))
        env.reset(seed=env_seed)  # sets up every wrapper; the checkpoint then says where each stood
        restore_env_state(env, saved["env"])
        restore_random_states(saved["random"], rng)
        log.restore(saved["diagnostics"], "iteration", start)  # last: a refusal leaves the log as it was
        return start, rows, episode_return, buffer, observation

    resumed = resume(checkpoint, fingerprint, restore, learner, rng)
    if resumed is None:  # (a refused checkpoint may have changed the environment: the reset undoes it)
        start, rows, episode_return = 0, [], 0.0
        buffer = ReplayBuffer(info, capacity=min(steps, 1 << 16))
        state, _ = env.reset(seed=env_seed)
        env_state(env)  # an environment that cannot be checkpointed fails now, not at its first checkpoint
        buffer.start_episode(newest_frame(state, info))
    else:
        start, rows, episode_return, buffer, state = resumed
    bar = progress(range(start, steps), desc=desc, total=steps, initial=start)
    for step in bar:
        action = learner.act(state, params.epsilon(step), rng)
        state, reward, terminated, truncated, _ = env.step(action)
        buffer.add(action, learning_reward(reward, info), terminated, newest_frame(state, info))
        episode_return += reward
        if step >= params.start_steps and (step + 1) % params.train_every == 0:
            stats = learner.update(buffer.sample(params.batch_size, rng))
            if stats:
                log.add({**stats, "epsilon": params.epsilon(step)})
        if terminated or truncated:
            bar.set_postfix(episode_return=episode_return, refresh=False)
            state, _ = env.reset()
            buffer.start_episode(newest_frame(state, info))
            episode_return = 0.0
        if _is_evaluation(step + 1, params.eval_every, steps):
            rows.append(_evaluation_row(step + 1, evaluate(learner, final=step + 1 == steps)))
            log.write("iteration", step + 1)
            bar.set_postfix(eval_return=rows[-1][1], refresh=False)
            if step + 1 < steps:
                save_checkpoint(checkpoint, fingerprint, {
                    "step": step + 1, "evaluations": torch.tensor(rows, dtype=torch.float64),
                    "diagnostics": log.rows,
                    "episode_return": episode_return, "learner": learner.state_dict(),
                    "buffer": {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in buffer.arrays().items()},
                    "env": env_state(env), "state": torch.from_numpy(np.array(state)), "random": random_states(rng)})
    return _evaluations(rows)


def generate_buffer(learner: Learner, env, info: EnvInfo, steps: int, env_seed: int, rng: np.random.Generator,
                    low_noise_p: float, rand_action_p: float, eval_eps: float,
                    desc: str) -> tuple[ReplayBuffer, pd.DataFrame]:
    """`steps` transitions of the trained policy, with the notebook's noise: each episode is
    low-noise with probability low_noise_p (random actions with probability eval_eps), otherwise
    takes random actions with probability rand_action_p. Also the unclipped return of every
    complete episode."""
    buffer = ReplayBuffer(info, capacity=steps)
    state, _ = env.reset(seed=env_seed)
    buffer.start_episode(newest_frame(state, info))
    low_noise = rng.random() < low_noise_p
    episodes, episode_return, episode_length = [], 0.0, 0
    bar = progress(range(steps), desc=desc, total=steps)
    for _ in bar:
        action = learner.act(state, eval_eps if low_noise else rand_action_p, rng)
        state, reward, terminated, truncated, _ = env.step(action)
        buffer.add(action, learning_reward(reward, info), terminated, newest_frame(state, info))
        episode_return += reward
        episode_length += 1
        if terminated or truncated:
            episodes.append((len(episodes), episode_return, episode_length, low_noise))
            bar.set_postfix(episode_return=episode_return, refresh=False)
            state, _ = env.reset()
            buffer.start_episode(newest_frame(state, info))
            low_noise = rng.random() < low_noise_p
            episode_return, episode_length = 0.0, 0
    return buffer, pd.DataFrame(episodes, columns=["episode", "return", "length", "low_noise"])


def train_offline(learner: Learner, buffer: ReplayBuffer, iterations: int, rng: np.random.Generator,
                  evaluate: Evaluate, checkpoint: Path, fingerprint: str, desc: str,
                  log: DiagnosticsLog | None = None) -> pd.DataFrame:
    """`iterations` updates on mini-batches of the fixed buffer; the evaluation series. The updates'
    statistics go to `log` (a new one by default)."""
    params = learner.params
    log = DiagnosticsLog() if log is None else log

    def restore(saved: dict):
        start, rows = checked_progress(saved, "iteration", iterations, params.eval_every)
        learner.load_state_dict(saved["learner"])
        restore_random_states(saved["random"], rng)
        log.restore(saved["diagnostics"], "iteration", start)  # last: a refusal leaves the log as it was
        return start, rows

    start, rows = resume(checkpoint, fingerprint, restore, learner, rng) or (0, [])
    bar = progress(range(start, iterations), desc=desc, total=iterations, initial=start)
    for iteration in bar:
        stats = learner.update(buffer.sample(params.batch_size, rng))
        if stats:
            log.add(stats)
        if _is_evaluation(iteration + 1, params.eval_every, iterations):
            rows.append(_evaluation_row(iteration + 1, evaluate(learner, final=iteration + 1 == iterations)))
            log.write("iteration", iteration + 1)
            bar.set_postfix(eval_return=rows[-1][1], refresh=False)
            if iteration + 1 < iterations:
                save_checkpoint(checkpoint, fingerprint, {
                    "iteration": iteration + 1, "evaluations": torch.tensor(rows, dtype=torch.float64),
                    "diagnostics": log.rows, "learner": learner.state_dict(), "random": random_states(rng)})
    return _evaluations(rows)


def _evaluations(rows: list[list[float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=EVALUATION_COLUMNS)
    frame[["iteration", "episodes"]] = frame[["iteration", "episodes"]].astype(int)
    return frame
