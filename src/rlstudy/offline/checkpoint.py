"""Checkpoints of long runs: one file written atomically, resumed only by the same run.

A checkpoint holds the learner, the random states (numpy's generator as its integers, torch's as
a tensor), the environment as values (env_state), and the loop's progress, so a resumed run draws
exactly what an uninterrupted one would. It holds tensors and plain data only and is read with
torch.load(weights_only=True), so nothing in the file can run code. Its `fingerprint` (the run's
parameters as JSON) must match, else it is ignored. A file that cannot be read or does not fit
the run (corrupt, cut short, foreign) is ignored with a warning naming it, and the run starts
afresh; its next checkpoint replaces the file.
"""

from __future__ import annotations

import copy
import io
import sys
from collections import deque
from pathlib import Path
from typing import Callable, TypeVar

import ale_py
import gymnasium as gym
import numpy as np
import torch

from rlstudy.core.errors import InputError, first_line
from rlstudy.core.atomic_writes import write_artefact

T = TypeVar("T")

# What each wrapper of the offline chain's environments (envs.make_env) keeps between steps;
# PassiveEnvChecker keeps only which checks it has run. An environment under any other wrapper
# cannot be checkpointed.
WRAPPER_STATE = {
    gym.wrappers.TimeLimit: ("_elapsed_steps",),
    gym.wrappers.OrderEnforcing: ("_has_reset",),
    gym.wrappers.PassiveEnvChecker: (),
    gym.wrappers.AtariPreprocessing: ("obs_buffer", "lives", "game_over"),
    gym.wrappers.FrameStackObservation: ("obs_queue",),
}
# Attributes of an unwrapped environment that are not its state: its spaces, spec and renderer;
# its generator is saved as numbers.
NOT_STATE = {"action_space", "observation_space", "spec", "render_mode", "screen", "clock", "_np_random"}


def _plain(value, where: str):
    """An attribute as tensors and plain data; anything else is a state this cannot save."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return torch.from_numpy(value.copy())
    if isinstance(value, (list, tuple, deque)):
        return [_plain(item, where) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise InputError(f"config 'offline.environments': cannot checkpoint {where}, a {type(value).__name__}; "
                     "the offline chain checkpoints classic-control and Atari environments")


def _restored(value, like, where: str):
    """A saved attribute in the form of the live one (`like`), refused unless it has its shape."""
    if isinstance(like, np.ndarray):
        if not (isinstance(value, torch.Tensor) and tuple(value.shape) == like.shape
                and value.numpy().dtype == like.dtype):
            raise ValueError(f"{where}: expected an array {like.dtype}{list(like.shape)}")
        return value.numpy().copy()
    if isinstance(like, (list, tuple, deque)):
        if not (isinstance(value, list) and len(value) == len(like)):
            raise ValueError(f"{where}: expected {len(like)} items")
        items = [_restored(v, item, f"{where}[{i}]") for i, (v, item) in enumerate(zip(value, like))]
        return deque(items, maxlen=like.maxlen) if isinstance(like, deque) else type(like)(items)
    if not (value is None or isinstance(value, (bool, int, float, str))):
        raise ValueError(f"{where}: expected a plain value, got {type(value).__name__}")
    return value


def _layers(env: gym.Env) -> list[gym.Env]:
    """The wrappers from the outside in, then the unwrapped environment."""
    layers = [env]
    while isinstance(layers[-1], gym.Wrapper):
        layers.append(layers[-1].env)
    return layers


def env_state(env: gym.Env) -> dict:
    """What an environment of the offline chain will do next, as tensors and plain data: each
    wrapper's counters and frames, the environment's generator, and its own state (a classic-
    control task's attributes, or the Atari emulator's state, random generator included, as the
    ALE's own bytes)."""
    *wrappers, core = _layers(env)
    saved = []
    for wrapper in wrappers:
        if type(wrapper) not in WRAPPER_STATE:
            raise InputError(f"config 'offline.environments': cannot checkpoint an environment under "
                             f"{type(wrapper).__name__}")
        saved.append({"type": type(wrapper).__name__,
                      "values": {name: _plain(getattr(wrapper, name), name) for name in WRAPPER_STATE[type(wrapper)]}})
    values = {"np_random": core.np_random.bit_generator.state}
    if isinstance(core, ale_py.AtariEnv):
        values["ale"] = torch.frombuffer(bytearray(core.ale.cloneState(include_rng=True).serialize()),
                                         dtype=torch.uint8)
    else:
        values.update({name: _plain(value, f"{type(core).__name__}.{name}") for name, value in vars(core).items()
                       if name not in NOT_STATE})
    return {"wrappers": saved, "env": values}


def restore_env_state(env: gym.Env, saved: dict) -> None:
    """Put an environment that has been reset into a state env_state gave, refusing a state
    whose layout is not the one this environment has (other wrappers, attributes or shapes)."""
    if not (isinstance(saved, dict) and isinstance(saved.get("wrappers"), list)):
        raise ValueError("not an environment's state")
    *wrappers, core = _layers(env)
    if [layer["type"] for layer in saved["wrappers"]] != [type(w).__name__ for w in wrappers]:
        raise ValueError("the saved environment has other wrappers")
    for wrapper, layer in zip(wrappers, saved["wrappers"]):
        if set(layer["values"]) != set(WRAPPER_STATE[type(wrapper)]):
            raise ValueError(f"{type(wrapper).__name__}: other attributes")
        for name, value in layer["values"].items():
            setattr(wrapper, name, _restored(value, getattr(wrapper, name), name))
    values = dict(saved["env"])
    if set(values) != set(env_state(core)["env"]):
        raise ValueError("the saved environment has other attributes")
    core.np_random.bit_generator.state = values.pop("np_random")
    if isinstance(core, ale_py.AtariEnv):
        core.ale.restoreState(ale_py.ALEState(values.pop("ale").numpy().tobytes()))
    for name, value in values.items():
        setattr(core, name, _restored(value, getattr(core, name), name))


def random_states(rng: np.random.Generator) -> dict:
    return {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state()}


def restore_random_states(states: dict, rng: np.random.Generator) -> None:
    rng.bit_generator.state = states["numpy"]
    torch.set_rng_state(states["torch"])


def checked_progress(saved: dict, key: str, total: int, every: int) -> tuple[int, list[list[float]]]:
    """The loop's position and its evaluations so far, refused unless they are what the loop writes:
    a multiple of `every` before `total`, one finite row per evaluation."""
    done, evaluations = saved[key], saved["evaluations"]
    if not (isinstance(done, int) and 0 < done < total and done % every == 0):
        raise ValueError(f"{key} {done!r} is not a checkpoint of {total} steps evaluated every {every}")
    expected = torch.arange(every, done + 1, every, dtype=torch.float64)
    if not (isinstance(evaluations, torch.Tensor) and evaluations.dtype == torch.float64
            and evaluations.shape == (len(expected), 4) and torch.equal(evaluations[:, 0], expected)
            and torch.isfinite(evaluations).all()):
        raise ValueError(f"evaluations are not those of {done} steps evaluated every {every}")
    return done, evaluations.tolist()


def save_checkpoint(path: str | Path, fingerprint: str, state: dict) -> None:
    buffer = io.BytesIO()
    torch.save({"fingerprint": fingerprint, **state}, buffer)
    write_artefact(path, buffer.getvalue(), None)


def _ignore(path: Path, reason: str) -> None:
    print(f"warning: ignoring {path}: {reason}; starting afresh", file=sys.stderr)


def load_checkpoint(path: str | Path, fingerprint: str) -> dict | None:
    """The checkpoint's state, or None when there is none, it belongs to other parameters, or it
    cannot be read (then with a warning)."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        state = torch.load(path, weights_only=True)
    except Exception as err:  # damaged, cut, foreign, or holding more than tensors and plain data
        _ignore(path, f"not a readable checkpoint ({first_line(err)})")
        return None
    if not (isinstance(state, dict) and isinstance(state.get("fingerprint"), str)):
        _ignore(path, "not a checkpoint of this pipeline")
        return None
    if state.pop("fingerprint") != fingerprint:
        print(f"ignoring {path}: written by a run with other parameters")
        return None
    return state


def resume(path: str | Path, fingerprint: str, restore: Callable[[dict], T], learner,
           rng: np.random.Generator) -> T | None:
    """What restore(saved) returns from the run's checkpoint, or None to start afresh. restore may
    raise on anything that does not fit the run; then the learner's and the random states are put
    back as they were, and a warning names the file."""
    saved = load_checkpoint(path, fingerprint)
    if saved is None:
        return None
    learner_state, numpy_state, torch_state = (copy.deepcopy(learner.state_dict()), rng.bit_generator.state,
                                               torch.get_rng_state())
    try:
        restored = restore(saved)
    except Exception as err:  # the run's own checkpoint raises nothing: this one is damaged or crafted
        learner.load_state_dict(learner_state)
        rng.bit_generator.state = numpy_state
        torch.set_rng_state(torch_state)
        _ignore(Path(path), f"it does not fit this run ({type(err).__name__}: {first_line(err)})")
        return None
    print(f"resuming from {path}")
    return restored
