"""The `device` key: resolution, CUDA determinism settings, and the training CLIs on a device.

No GPU is needed: on a CPU-only machine `auto` must resolve to the CPU and give the CPU's bytes.
The tests marked `cuda` run only where PyTorch sees a GPU.
"""

import json
import os
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from rlstudy.bellman.cli import run_method, train_qstar
from rlstudy.bellman.data.trajectories import save_trajectory
from rlstudy.bellman.learners.metrics import ErrorMeter, q_on_grid
from rlstudy.bellman.numerics.compiled.qnet import init_params
from rlstudy.bellman.problem.exact import solve_on_grid
from rlstudy.bellman.numerics.compiled.residuals import TrajectoryTensors, make_batch
from rlstudy.bellman.problem.sde import sample_trajectory
from rlstudy.core import cli as common
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_npy
from rlstudy.core.provenance import PROVENANCE_SUFFIX
from bellman_fixtures import dynamics

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="PyTorch sees no CUDA GPU")
PROBLEM_JSON = json.dumps({"dynamics": {"dt": 0.19634954084936207, "sigma": 0.2, "reward_of": "current"}, "gamma": 0.9})
SGD = {"epochs": 1, "batch_size": 500, "lr0": 0.05, "lr_decay": 0.9, "ur_action": "policy"}
CBO = {"particles": 6, "particle_batch": 4, "samples": 300, "epochs": 3, "lam": 1.0, "eta": 0.5, "noise": 0.3,
       "beta": 1.0, "ur_action": "policy", "output_bias_init": "reward_level", "kick": 0.1,
       "kick_decay": 0.9, "ess_target": 0.5}


@pytest.fixture(autouse=True)
def restore_torch_settings():
    """setup_torch changes process-wide settings; other test modules get them back as they were."""
    saved = torch.are_deterministic_algorithms_enabled(), torch.get_float32_matmul_precision()
    yield
    torch.use_deterministic_algorithms(saved[0])
    torch.set_float32_matmul_precision(saved[1])


def test_cpu_and_auto_resolve_to_what_torch_sees():
    assert common.resolve_device("cpu") == torch.device("cpu")
    assert common.resolve_device("auto").type == ("cuda" if CUDA else "cpu")


@pytest.mark.skipif(CUDA, reason="a GPU is present")
def test_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(InputError, match="device 'cuda' requested, but .* sees no CUDA GPU"):
        common.resolve_device("cuda")


def test_unknown_device_is_rejected():
    with pytest.raises(InputError, match=r"device must be one of \['auto', 'cpu', 'cuda'\]"):
        common.resolve_device("gpu")


def test_cuda_setup_applies_pytorch_determinism_settings(monkeypatch):
    """What setup_torch does for CUDA, checked without a GPU (availability faked)."""
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", "placeholder")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")  # restored (removed) after the test
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    saved = torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic
    try:
        assert common.setup_torch("cuda") == torch.device("cuda")
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.get_float32_matmul_precision() == "highest"
    finally:
        torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = saved


def test_cpu_setup_is_deterministic_without_importing_inductor():
    """setup_torch("cpu") sets ATen's deterministic flag without torch.use_deterministic_algorithms'
    import of Inductor's config (TorchDynamo: seconds in each of the workflow's short jobs)."""
    import subprocess

    probe = ("import sys, torch; from rlstudy.core.cli import setup_torch; setup_torch('cpu'); "
             "print(torch.are_deterministic_algorithms_enabled(), 'torch._inductor' in sys.modules, "
             "'torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False", "False"]


def test_cpu_setup_leaves_the_cuda_environment_alone(monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", "placeholder")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")
    assert common.setup_torch("cpu") == torch.device("cpu")
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ


def test_moving_to_the_cpu_changes_nothing(small_trajectory):
    traj = small_trajectory("evaluation", n=500)
    moved = traj.to("cpu")
    for name in ("states", "action_indices", "rewards", "features"):
        assert getattr(moved, name) is getattr(traj, name)  # .to() of the same device is the tensor itself
    theta = init_params(1, torch.Generator().manual_seed(1))[0]
    assert ErrorMeter({"error": q_on_grid(theta)}).feats.device == theta.device


def batch_on(traj: TrajectoryTensors, device) -> list[torch.Tensor]:
    starts = torch.randint(len(traj.states) - 2, (64,), generator=torch.Generator().manual_seed(3))
    batch = make_batch(traj.to(device), starts, "UR", "evaluation", dynamics(), torch.Generator().manual_seed(4),
                       "policy")
    return [batch.feats, batch.next_feats, batch.rewards, batch.alt_probs]


@needs_cuda
def test_a_batch_on_cuda_draws_the_cpu_numbers(small_trajectory):
    traj = small_trajectory("evaluation", n=500)
    for on_cpu, on_cuda in zip(batch_on(traj, "cpu"), batch_on(traj, "cuda")):
        assert on_cuda.device.type == "cuda"
        torch.testing.assert_close(on_cuda.cpu(), on_cpu, rtol=1e-5, atol=1e-6)


@pytest.fixture
def trajectory(tmp_path):
    folder = tmp_path / "trajectory"
    save_trajectory(folder, sample_trajectory("evaluation", 3000, dynamics(), np.random.default_rng(5)), None)
    return folder


def cli(module, monkeypatch, *args):
    monkeypatch.setattr(sys, "argv", [module.__file__, *map(str, args)])
    module.main()


def exact_file(out):
    """A (coarse) exact Q of the evaluation task, as solve_exact writes it."""
    if not out.exists():
        save_npy(out, solve_on_grid(200, "evaluation", 0.9, dynamics()).values, None)
    return out


def train(monkeypatch, trajectory, out, *device):
    cli(train_qstar, monkeypatch, "--task", "evaluation", "--estimator", "UR", "--trajectory", trajectory,
        "--params", json.dumps(SGD), "--problem", PROBLEM_JSON, "--seed", 7, "--out", out,
        "--exact", exact_file(out.parent / "q_exact.npy"), "--curve-out", out.parent / "errors.csv", *device)
    return out.read_bytes()


def fit(monkeypatch, trajectory, reference, optimizer, params, out_dir, *device):
    """SGD with UR (random next states), CBO with BFF-matched (a masked pool of starts)."""
    estimator = "UR" if optimizer == "sgd" else "BFF-matched"
    cli(run_method, monkeypatch, "--dataset", "ours", "--optimizer", optimizer, "--setting", optimizer,
        "--task", "evaluation", "--estimator", estimator,
        "--run-seed", 0, "--seed", 7, "--trajectory", trajectory, "--reference", reference,
        "--exact", exact_file(reference.parent / "q_exact.npy"),
        "--params", json.dumps(params), "--problem", PROBLEM_JSON, "--numerics", "compiled",
        "--out-dir", out_dir, *device)
    return (out_dir / "q.pt").read_bytes(), (out_dir / "errors.csv").read_bytes()


def device_of(artefact):
    record = json.loads(artefact.with_name(artefact.name + PROVENANCE_SUFFIX).read_text())
    return record["parameters"]["device"]


@pytest.mark.skipif(CUDA, reason="on a GPU machine auto is cuda, whose bits differ from the CPU's")
def test_auto_on_a_cpu_machine_trains_on_the_cpu_with_the_cpu_bytes(tmp_path, monkeypatch, trajectory):
    reference = tmp_path / "cpu" / "q_star.pt"
    ref_bytes = train(monkeypatch, trajectory, reference, "--device", "cpu")  # config.yaml's device
    assert device_of(reference) == {"requested": "cpu", "used": "cpu"}
    auto_reference = tmp_path / "auto" / "q_star.pt"
    assert train(monkeypatch, trajectory, auto_reference, "--device", "auto") == ref_bytes
    assert device_of(auto_reference) == {"requested": "auto", "used": "cpu"}

    for optimizer, params in (("sgd", SGD), ("cbo", CBO)):
        cpu = fit(monkeypatch, trajectory, reference, optimizer, params, tmp_path / optimizer / "cpu", "--device",
                  "cpu")
        assert fit(monkeypatch, trajectory, reference, optimizer, params, tmp_path / optimizer / "auto",
                   "--device", "auto") == cpu
        assert device_of(tmp_path / optimizer / "auto" / "q.pt") == {"requested": "auto", "used": "cpu"}


@needs_cuda
def test_cuda_runs_repeat_bit_for_bit_and_stay_near_the_cpu(tmp_path, monkeypatch, trajectory):
    reference = tmp_path / "q_star.pt"
    train(monkeypatch, trajectory, reference)
    for optimizer, params in (("sgd", SGD), ("cbo", CBO)):
        first = fit(monkeypatch, trajectory, reference, optimizer, params, tmp_path / optimizer / "a", "--device",
                    "cuda")
        assert fit(monkeypatch, trajectory, reference, optimizer, params, tmp_path / optimizer / "b",
                   "--device", "cuda") == first
        assert device_of(tmp_path / optimizer / "a" / "q.pt")["used"] == "cuda"
        fit(monkeypatch, trajectory, reference, optimizer, params, tmp_path / optimizer / "cpu")
        on_cuda = pd.read_csv(tmp_path / optimizer / "a" / "errors.csv")
        on_cpu = pd.read_csv(tmp_path / optimizer / "cpu" / "errors.csv")
        np.testing.assert_allclose(on_cuda["rel_error"], on_cpu["rel_error"], rtol=1e-3)
