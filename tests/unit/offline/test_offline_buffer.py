"""The replay buffer: stacks rebuilt at sampling time never cross episodes; terminals and truncations."""

import numpy as np
import pytest

from rlstudy.core.errors import InputError
from rlstudy.offline.buffer import ReplayBuffer
from rlstudy.offline.envs import EnvInfo

ATARI = EnvInfo("Fake", True, (2, 2), 4, 3, True)
FLAT = EnvInfo("Flat", False, (3,), 1, 2, False)


def frame(value):
    return np.full((2, 2), value, dtype=np.uint8)


def two_episodes(info=ATARI, make=frame):
    """Episode 1: frames 1..4, three transitions, terminal. Episode 2: frames 11..16, truncated."""
    buffer = ReplayBuffer(info, capacity=2)  # small: the arrays grow
    buffer.start_episode(make(1))
    for t, value in enumerate((2, 3, 4)):
        buffer.add(action=t, reward=1.0, terminal=value == 4, next_frame=make(value))
    buffer.start_episode(make(11))
    for value in (12, 13, 14, 15, 16):
        buffer.add(action=0, reward=0.5, terminal=False, next_frame=make(value))
    return buffer


def stack_values(states):
    return states[..., 0, 0].tolist()


def test_stacks_have_zeros_before_the_episode_start_and_never_frames_of_the_previous_episode():
    b = two_episodes().batch(np.arange(8))
    assert stack_values(b.states) == [[0, 0, 0, 1], [0, 0, 1, 2], [0, 1, 2, 3],
                                      [0, 0, 0, 11], [0, 0, 11, 12], [0, 11, 12, 13], [11, 12, 13, 14],
                                      [12, 13, 14, 15]]
    assert stack_values(b.next_states) == [[0, 0, 1, 2], [0, 1, 2, 3], [1, 2, 3, 4],
                                           [0, 0, 11, 12], [0, 11, 12, 13], [11, 12, 13, 14],
                                           [12, 13, 14, 15], [13, 14, 15, 16]]


def test_terminal_stops_bootstrapping_and_truncation_does_not():
    b = two_episodes().batch(np.arange(8))
    assert b.not_done.tolist() == [1, 1, 0, 1, 1, 1, 1, 1]
    assert b.actions.tolist()[:3] == [0, 1, 2] and b.rewards.tolist()[3] == 0.5


def test_each_frame_is_stored_once():
    buffer = two_episodes()
    assert len(buffer) == 8 and buffer.n_frames == 8 + 2  # one extra (final) frame per episode
    assert buffer.frames.dtype == np.uint8


def test_flat_observations_are_states_themselves():
    b = two_episodes(FLAT, lambda v: np.full(3, v, dtype=np.float32)).batch(np.array([2, 3]))
    assert b.states[:, 0].tolist() == [3, 11] and b.next_states[:, 0].tolist() == [4, 12]


def test_sampling_is_uniform_over_transitions_and_seeded():
    buffer = two_episodes()
    a = buffer.sample(64, np.random.default_rng(1))
    b = buffer.sample(64, np.random.default_rng(1))
    assert np.array_equal(a.states.numpy(), b.states.numpy()) and a.states.shape == (64, 4, 2, 2)


def test_save_and_load_round_trip(tmp_path):
    buffer = two_episodes()
    buffer.save(tmp_path / "buffer", record=None)
    loaded = ReplayBuffer.load(tmp_path / "buffer", ATARI)
    for name, array in buffer.arrays().items():
        assert np.array_equal(loaded.arrays()[name], array), name
    with pytest.raises(InputError, match="frames of shape"):
        ReplayBuffer.load(tmp_path / "buffer", EnvInfo("Other", True, (3, 3), 4, 3, True))
    with pytest.raises(InputError, match="missing input file"):
        ReplayBuffer.load(tmp_path / "nothing", ATARI)
