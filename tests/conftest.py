import numpy as np
import pytest
import torch

from rlstudy.residuals import TrajectoryTensors
from rlstudy.sde import Dynamics, sample_trajectory


@pytest.fixture
def small_trajectory():
    def make(policy="uniform", n=2000, dynamics=Dynamics()):
        traj = sample_trajectory(policy, n, dynamics, np.random.default_rng(0))
        return TrajectoryTensors.from_arrays(traj.states, traj.action_indices, traj.rewards)
    return make


@pytest.fixture
def theta():
    from rlstudy.qnet import init_params
    return init_params(1, torch.Generator().manual_seed(0))[0]
