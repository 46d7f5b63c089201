import numpy as np
import pytest
import torch
from project_copy import SMOKE, copy_project, snakemake

from rlstudy.bellman.residuals import TrajectoryTensors
from rlstudy.bellman.sde import sample_trajectory
from bellman_fixtures import dynamics


@pytest.fixture
def one_thread():
    """One torch thread, as the rules run their jobs: small networks on a shared machine are many
    times slower with more threads (the agents' and offline tests use it)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def small_trajectory():
    def make(policy="uniform", n=2000, dynamics=dynamics()):
        traj = sample_trajectory(policy, n, dynamics, np.random.default_rng(0))
        return TrajectoryTensors.from_arrays(traj.states, traj.action_indices, traj.rewards)
    return make


@pytest.fixture
def theta():
    from rlstudy.bellman.qnet import init_params
    return init_params(1, torch.Generator().manual_seed(0))[0]


@pytest.fixture(scope="session")
def smoke_project(tmp_path_factory):
    """One run of the whole workflow at smoke scale in a temporary copy of the project, shared by
    every integration test that only reads its outputs (it is the costliest step of the suite)."""
    workdir = copy_project(tmp_path_factory.mktemp("smoke"))
    result = snakemake(workdir, *SMOKE)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return workdir
