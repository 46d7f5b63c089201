"""The recovery docs/reliability.md prescribes ("Interrupted runs") after a kill -9 of Snakemake, of a job,
or of both: `snakemake --unlock`, then the same `snakemake` command, ends with the bytes of an
uninterrupted build. A small smoke-scale target: the control task's two trajectories, one job at a
time, so the job killed is the second, forked from the warm-start server the first one started."""

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from project_copy import SNAKEMAKE, copy_project, digests, snakemake

pytestmark = pytest.mark.integration

PROFILE = ["--profile", "workflow/profiles/smoke", "--cores", "1"]
TARGETS = [f"data/trajectories/ours/control/{size}/states.npy" for size in ("short", "long")]
LOGS = [f"logs/trajectory/control_{size}.log" for size in ("short", "long")]
DEADLINE_S = 120


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project copy and the digests of an uninterrupted build of the targets in it."""
    workdir = copy_project(tmp_path_factory.mktemp("interrupted"))
    built = snakemake(workdir, *PROFILE, *TARGETS)
    assert built.returncode == 0, built.stderr[-3000:]
    return workdir, digests(workdir)


def start_afresh(workdir: Path) -> None:
    for name in ("data", "results", "logs", ".snakemake"):
        shutil.rmtree(workdir / name, ignore_errors=True)


def descendants(pid: int) -> list[int]:
    """Every process under pid (the jobs' shells and commands), children first listed last."""
    parents = {}
    for entry in Path("/proc").iterdir():
        try:
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (ValueError, OSError):
            continue
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"waited {DEADLINE_S} s for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("killed", ["snakemake", "job", "both"])
def test_the_documented_recovery_restores_the_bytes_of_an_uninterrupted_build(project, killed):
    """The issue's case is 'snakemake': its job carried on and finished its outputs, still marked
    incomplete, and after --unlock the plain run stopped with IncompleteFilesException (rc 1); the
    profiles now set rerun-incomplete."""
    workdir, uninterrupted = project
    start_afresh(workdir)
    run = subprocess.Popen([SNAKEMAKE, *PROFILE, *TARGETS], cwd=workdir, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The second job has started: the first one's outputs are complete, the second one's not yet.
        wait_for(lambda: all((workdir / log).exists() for log in LOGS) or run.poll() is not None, "the second job")
        time.sleep(0.3)
        job = descendants(run.pid)
        assert run.poll() is None and job, "killed too late: the run had ended"
        if killed == "snakemake":
            os.kill(run.pid, signal.SIGKILL)
        elif killed == "job":
            for pid in reversed(descendants(run.pid)):
                with contextlib.suppress(ProcessLookupError):  # a short-lived child may end before its kill
                    os.kill(pid, signal.SIGKILL)
        else:
            os.killpg(run.pid, signal.SIGKILL)
        run.wait(timeout=DEADLINE_S)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    if killed == "snakemake":  # its job carries on to its end (the case), or dies with it
        wait_for(lambda: not any(map(alive, job)), "the orphaned job to end")
        assert all((workdir / target).exists() for target in TARGETS)
    assert snakemake(workdir, *PROFILE, "--unlock").returncode == 0
    recovered = snakemake(workdir, *PROFILE, *TARGETS)
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    after = digests(workdir)
    assert after == uninterrupted, sorted(k for k in after.keys() | uninterrupted.keys()
                                          if after.get(k) != uninterrupted.get(k))
