import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# One thread for NumPy's OpenBLAS and PyTorch, as every job of the workflow runs (core/process.py), set
# before either loads: the tests' networks and products are small, and on a machine whose cores the
# session's smoke build keeps busy, OpenBLAS's threads wait on each other (a smoke-scale DQN run took 18 s
# of CPU with two threads, 5.7 with one). A count set by the caller is kept; the tests of the thread
# defaults run their steps with an environment of their own (test_process.py).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from project_copy import ROOT, SMOKE, SNAKEMAKE, copy_project

from rlstudy.bellman.numerics.compiled.residuals import TrajectoryTensors
from rlstudy.bellman.problem.sde import sample_trajectory
from bellman_fixtures import dynamics


@pytest.fixture(autouse=True)
def fresh_inputs_read():
    """Each test starts as a new step's process would: with no input read yet (core.loaders records every
    file a process reads for its figures' provenance; a file read by an earlier test may be gone)."""
    from rlstudy.core import loaders

    loaders._INPUTS_READ.clear()
    yield


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
    from rlstudy.bellman.numerics.compiled.qnet import init_params
    return init_params(1, torch.Generator().manual_seed(0))[0]


def pytest_collection_modifyitems(items):
    """The tests that wait for the smoke build at their start run last, in their order: every other
    test (the unit tests, the workflow tests on copies of their own) runs while the build does."""
    items.sort(key=lambda item: "smoke_project" in item.fixturenames)


# The smoke build writes its exit status here when it ends, so that any pytest-xdist worker can wait for it.
STATUS = "smoke.status"
RECORD_STATUS = ("import os, subprocess, sys\n"
                 "status = subprocess.call(sys.argv[1:])\n"
                 "with open('smoke.status.part', 'w') as out:\n"
                 "    out.write(str(status))\n"
                 "os.replace('smoke.status.part', 'smoke.status')\n"
                 "sys.exit(status)\n")


def worker_of_many() -> bool:
    """Whether this session is one of several pytest-xdist workers (make test runs two)."""
    return os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") != "1"


WORKFLOW_TESTS = Path(__file__).resolve().parent / "workflow"
PRELOAD = "from rlstudy.runtime.warmstart.preload import preload; preload()"


def shared_temp(tmp_path_factory) -> Path:
    """The folder every pytest-xdist worker of the run sees (the session's own without xdist)."""
    return tmp_path_factory.getbasetemp().parent if worker_of_many() else tmp_path_factory.getbasetemp()


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels(request, tmp_path_factory):
    """Every study's compiled kernels in the checkout's Numba cache before any test copies the project
    (copy_project carries the cache): compiled once, by the warm-start server's own preload in a process of
    its own, not in every copy. Only for a session with workflow tests; under
    pytest-xdist the first worker compiles and the others wait for it."""
    if not any(WORKFLOW_TESTS in item.path.parents for item in request.session.items):
        return
    shared = shared_temp(tmp_path_factory)
    with open(shared / "kernels.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "kernels.done").exists():
            compiled = subprocess.run([sys.executable, "-c", PRELOAD], cwd=ROOT, capture_output=True, text=True)
            assert compiled.returncode == 0, compiled.stderr[-6000:]
            (shared / "kernels.done").touch()


@pytest.fixture(scope="session", autouse=True)
def smoke_build(request, tmp_path_factory, compiled_kernels):
    """The smoke build, started in the background at the session's first test when any test of the
    session reads it (none does in `make test-fast`). Under pytest-xdist the workers share one build:
    the first to take its lock starts it in the run's common temporary folder, the others wait for its
    status file; the starter lets it finish at its own end, as another worker may still need it."""
    if not any("await_smoke_project" in item.fixturenames for item in request.session.items):
        yield None
        return
    shared = shared_temp(tmp_path_factory)
    workdir = shared / "smoke"
    with open(shared / "smoke.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another worker builds it
            yield workdir, None
            return
        copy_project(workdir)
        with open(workdir / "smoke.log", "w") as log:
            build = subprocess.Popen([sys.executable, "-c", RECORD_STATUS, SNAKEMAKE, *SMOKE], cwd=workdir,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            yield workdir, build
            if build.poll() is None and not worker_of_many():  # the session ended before a test waited (-x)
                os.killpg(build.pid, signal.SIGTERM)
            build.wait()


@pytest.fixture(scope="session")
def await_smoke_project(smoke_build):
    """A function that waits for the smoke build and returns its folder: for a test with work of its
    own to do first, so that the work runs while the build does."""
    def wait():
        workdir, build = smoke_build
        if build is not None:
            build.wait()
        while not (workdir / STATUS).exists():  # started by another worker, which holds the lock until it ends
            with open(workdir.parent / "smoke.lock") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    time.sleep(1)
                    continue
            assert (workdir / STATUS).exists(), f"the worker that started the smoke build in {workdir} ended first"
        assert (workdir / STATUS).read_text() == "0", (workdir / "smoke.log").read_text()[-6000:]
        return workdir
    return wait


@pytest.fixture(scope="session")
def smoke_project(await_smoke_project):
    """One run of the whole workflow at smoke scale in a temporary copy of the project, shared by
    every integration test that only reads its outputs (it is the costliest step of the suite)."""
    return await_smoke_project()
