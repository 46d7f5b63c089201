"""The compiled kernels as the workflow's jobs meet them, each a new Python process: a process loads the
kernels an earlier one compiled from Numba's cache, kernels compiled for narrower vectors give the
same bits, and MPO's update gives the same bytes in a fresh process. Each test starts Python once to three
times, some of them compiling (tens of seconds on a busy machine): with the workflow's tests in
`make test`, out of `make test-fast`'s loop, which keeps every test of the kernels' arithmetic."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from project_copy import ROOT, copy_project

from rlstudy.report import rebuild

TESTS = Path(__file__).resolve().parents[1]


def test_a_second_process_loads_the_compiled_kernels_from_numbas_cache():
    """Every job is a new process: it must load the kernels compiled by an earlier one, not compile
    them again (the bug: a compiled helper captured in a closure made Numba's cache key differ in
    every process, and each job spent seconds compiling). The earlier process is conftest's
    compiled_kernels, which compiled every kernel into the checkout's cache in a process of its own."""
    probe = ("import numpy as np, torch\n"
             "from rlstudy.bellman.numerics.compiled import qnet\n"
             "theta = qnet.init_params(1, torch.Generator().manual_seed(0))[0]\n"
             "feats = qnet.features(torch.linspace(0, 6, 300, dtype=torch.float64))\n"
             "qnet.forward_no_grad(theta, feats)\n"
             "from rlstudy.bellman.numerics.compiled import residual_kernels\n"
             "residual_kernels.warm_up()\n")
    env = {**os.environ, "NUMBA_DEBUG_CACHE": "1"}  # the cache compiled_kernels wrote, wherever the caller keeps it
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    log = done.stdout + done.stderr
    assert "data saved" not in log, log[-3000:]
    loaded = [line for line in log.splitlines() if "data loaded" in line]
    for kernel in ("trig._cos_layer", "trig._layer_bound", "._sgd_direction-", "._particle_losses-"):
        assert any(kernel in line for line in loaded), (kernel, log[-3000:])


@pytest.mark.parametrize("copied_by", ["the tests' copy_project", "verify's copy of the checkout"])
def test_a_copy_of_the_project_loads_the_kernels_the_checkout_compiled(tmp_path, copied_by):
    """The workflow's tests copy the project (project_copy.copy_project), and verify rebuilds in a copy of
    the checkout (report/rebuild.copy_project), each with Numba's cache of the kernels compiled in the
    checkout (conftest's compiled_kernels): a copy's warm-start server (the same preload) loads every
    kernel and compiles none (compiling them is about a minute of CPU)."""
    copy = tmp_path / "copy"
    if copied_by == "the tests' copy_project":
        copy_project(copy)
    else:
        copy.mkdir()
        rebuild.copy_project(ROOT, copy)
    probe = ("import rlstudy; print(rlstudy.__file__)\n"
             "from rlstudy.runtime.warmstart.preload import preload; preload()\n")
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "NUMBA_DEBUG_CACHE": "1"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=env, capture_output=True, text=True, check=True)
    log = done.stdout + done.stderr
    assert log.startswith(str(copy / "src"))
    assert "data loaded" in log and "data saved" not in log, log[-3000:]


def test_the_widest_vectors_whichever_kernels_a_process_loads_first():
    """Numba's target is the process's, fixed by its first kernel: the warm-start server loads the agents'
    kernels before the bellman study's, and its jobs ran trig's cosine at 256 bits (1.4-1.6x slower)
    while only trig.py asked for the wider vectors. Every kernel module takes its njit from core/jit.py:
    after the agents' warm-up, the target's features are the wider choice, as they are after the
    bellman study's."""
    import llvmlite.binding as llvm

    if "+avx512f" not in llvm.get_host_cpu_features().flatten().split(","):
        pytest.skip("no AVX-512: one vector width")
    probe = ("import sys, importlib\n"
             "importlib.import_module(f'rlstudy.{sys.argv[1]}.warmup').warm_up()\n"
             "from numba.core.registry import cpu_target\n"
             "print(cpu_target.target_context.codegen().magic_tuple()[2])\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CPU_FEATURES"}
    features = {study: subprocess.run([sys.executable, "-c", probe, study], env=env, capture_output=True, text=True,
                                      check=True).stdout.strip().splitlines()[-1] for study in ("agents", "bellman")}
    assert "-prefer-256-bit" in features["agents"].split(","), features
    assert features["agents"] == features["bellman"]


def test_the_compiled_kernels_give_the_same_bits_at_any_vector_width():
    """core/jit.njit asks LLVM for the CPU's widest vectors (on AVX-512, 512 bits where its tuning prefers
    256): the kernels have no FMA and no reassociation, so a process compiled for the narrower
    vectors (Numba's features given by NUMBA_CPU_FEATURES) computes the same Q, gradient and losses."""
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features().flatten()
    if "+avx512f" not in features.split(","):
        pytest.skip("no AVX-512: 256 bits are already the widest vectors, so both processes would compile the same")
    probe = ("import hashlib, numpy as np, torch\n"
             "from rlstudy.bellman.numerics.compiled import backend, qnet, trig\n"
             "from rlstudy.bellman.numerics.compiled.residuals import TrajectoryTensors, make_batch, start_pool\n"
             "from rlstudy.bellman.problem.sde import sample_trajectory\n"
             "from bellman_fixtures import PROBLEM\n"
             "gen = torch.Generator().manual_seed(0)\n"
             "theta = qnet.init_params(3, gen)\n"
             "z = (torch.rand(10_001, generator=gen) * 40 - 20).numpy()\n"
             "path = sample_trajectory('uniform', 3000, PROBLEM.dynamics, np.random.default_rng(1))\n"
             "traj = TrajectoryTensors.from_arrays(path.states, path.action_indices, path.rewards)\n"
             "batch = make_batch(traj, start_pool('UR', traj.action_indices)[:1500], 'UR', 'control', PROBLEM.dynamics,"
             " torch.Generator().manual_seed(2))\n"
             "outputs = [trig.cos(z), *trig.sincos(z), *backend.sgd_direction(theta[0], batch, 0.9),"
             " backend.particle_losses(theta, batch, 0.9)]\n"
             "print(hashlib.sha256(b''.join(np.asarray(o).tobytes() for o in outputs)).hexdigest())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}

    def digest(extra_env):
        done = subprocess.run([sys.executable, "-c", probe], env={**env, **extra_env}, capture_output=True, text=True,
                              check=True)
        return done.stdout.strip()

    assert digest({}) == digest({"NUMBA_CPU_FEATURES": features + ",+prefer-256-bit"})


def test_an_mpo_update_is_byte_identical_in_a_fresh_process():
    """Two processes (the compiled kernels loaded from Numba's cache in the second) give the same bytes,
    for the learner and batch of tests/unit/agents/test_mpo_gradients.py."""
    script = ("import sys, torch, test_mpo_gradients as t; learner = t.agent(); "
              "learner.update({k: torch.from_numpy(v) for k, v in t.batch_arrays().items()}); "
              "sys.stdout.buffer.write(learner.policy_flat.values.tobytes() + learner.critic_flat.values.tobytes() "
              "+ learner.dual_flat.values.tobytes())")
    path = [str(TESTS / "unit" / "agents"), str(TESTS), *sys.path]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(path)}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, check=True, env=environment).stdout
            for _ in range(2)]
    assert len(runs[0]) > 0 and runs[0] == runs[1]
