"""The smoke workflow through a real SLURM: a one-node cluster on 127.0.0.1, against a local run.

Needs root. Installs Debian's slurm-wlm and munge with apt-get (when their programs are missing)
and the project's `slurm` extra (when missing; uninstalled again at the end, so that the default
install stays free of the plugin), writes /etc/slurm/slurm.conf (removed at the end), starts
munged (as the munge user), slurmctld and slurmd with keys, state, spool and logs in a temporary
directory and on free ports, runs the smoke workflow with the README's command

    snakemake --profile workflow/profiles/slurm --profile workflow/profiles/smoke

in one temporary copy of the project and `snakemake --profile workflow/profiles/smoke` in another
(the session's smoke build, which runs beside it), checks that data/ and results/ are byte-identical,
and stops the daemons it started by their process ids. Skipped, with the reason, when not root,
when neither SLURM nor apt-get is there, when the machine has a slurm.conf of its own, or when
RLSTUDY_SLURM_TEST=0.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from contextlib import contextmanager
from pathlib import Path

import pytest
from project_copy import AUTHORS, copy_project, digests

pytestmark = [pytest.mark.integration, pytest.mark.slurm]
ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
SLURM_RUN = ["--profile", "workflow/profiles/slurm", "--profile", "workflow/profiles/smoke"]  # the README's
# One job of each kind of shell rule on the CBO study's path (trajectory, Q*, one SGD run, a figure):
# enough to exercise the executor, compared with the same files of the local smoke run (the session's
# smoke_project). Each SLURM job starts Snakemake twice, which costs more than a smoke job's work, so
# the targets are kept to few jobs.
TARGETS = [*(f"figures/ours/trajectory_control.{fmt}" for fmt in ("png", "pdf")),
           "results/runs/ours/control/sgd/UR/seed0/q.pt"]
APT_PACKAGES = ["slurm-wlm", "munge"]
PROGRAMS = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "srun", "sinfo", "scancel"]
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
SHELL_RULES = ("trajectory", "reference", "run_method", "trajectory_figure")
# The configuration must be at SLURM's default path: inside a job, the SLURM plugin's job step
# drops SLURM_CONF (with every other SLURM_* variable) before it calls srun.
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
MARKER = "# Written by rlstudy's tests/test_slurm.py for a one-node test cluster; it removes it again.\n"


def program(name: str) -> str | None:
    return shutil.which(name, path=SBIN_PATH)


def skip_reason() -> str | None:
    if os.environ.get("RLSTUDY_SLURM_TEST") == "0":
        return "RLSTUDY_SLURM_TEST=0"
    if os.geteuid() != 0:
        return "needs root: installs slurm-wlm and munge with apt-get and starts munged, slurmctld and slurmd"
    if not all(program(p) for p in PROGRAMS) and not program("apt-get"):
        return "SLURM is not installed and apt-get is not available to install it"
    if SYSTEM_CONF.exists() and not SYSTEM_CONF.read_text(errors="replace").startswith(MARKER):
        return f"this machine has its own {SYSTEM_CONF}; the test does not replace it"
    return None


def run(cmd, timeout, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result


def install_slurm() -> None:
    if all(program(p) for p in PROGRAMS):
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Keep the packages from starting their own daemons (munge's init script would): the test
    # starts and stops its own. policy-rc.d exit 101 = "action forbidden", Debian's switch for this.
    policy = Path("/usr/sbin/policy-rc.d")
    added_policy = not policy.exists()
    if added_policy:
        policy.write_text("#!/bin/sh\n# written by rlstudy's tests/test_slurm.py during apt-get install\nexit 101\n")
        policy.chmod(0o755)
    try:
        run(["apt-get", "update", "-q"], timeout=300, env=env)
        run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *APT_PACKAGES], timeout=400, env=env)
    finally:
        if added_policy:
            policy.unlink(missing_ok=True)
    missing = [p for p in PROGRAMS if not program(p)]
    assert not missing, f"apt-get installed {APT_PACKAGES} but these programs are missing: {missing}"


def installed_distributions() -> set[str]:
    return {d.metadata["Name"].lower() for d in importlib.metadata.distributions()}


def install_slurm_extra() -> list[str]:
    """Install the `slurm` extra's pins when the plugin is missing; returns what was added."""
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None:
        return []
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["slurm"]
    before = installed_distributions()
    run([sys.executable, "-m", "pip", "install", "--quiet", *pins], timeout=300)
    importlib.invalidate_caches()
    return sorted(installed_distributions() - before)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout: float, what: str, logs=()) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    tails = "\n".join(f"--- {p}:\n{Path(p).read_text(errors='replace')[-2000:]}" for p in logs if Path(p).exists())
    pytest.fail(f"timed out after {timeout} s waiting for {what}\n{tails}")


def slurm_conf(base: Path, munge_socket: Path) -> str:
    host = socket.gethostname().split(".")[0]
    mem_kib = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal:")))
    memory_mb = int(mem_kib / 1024 * 0.9)  # below what slurmd finds, or it drains the node
    return MARKER + f"""\
ClusterName=rlstudy
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
MpiDefault=none
SwitchType=switch/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MinJobAge=300
ReturnToService=2
StateSaveLocation={base}/state
SlurmdSpoolDir={base}/spool
SlurmctldPidFile={base}/slurmctld.pid
SlurmdPidFile={base}/slurmd.pid
SlurmctldLogFile={base}/slurmctld.log
SlurmdLogFile={base}/slurmd.log
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={memory_mb} State=UNKNOWN
PartitionName=rlstudy Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


@contextmanager
def slurm_cluster():
    """Start munged, slurmctld and slurmd; yield the environment of the cluster's clients; stop them."""
    install_slurm()
    base = Path(tempfile.mkdtemp(prefix="rlstudy-slurm-"))
    base.chmod(0o755)  # munged (not root) must reach its folder inside
    env = {**os.environ, "SLURM_CONF": str(SYSTEM_CONF)}
    added: list[str] = []  # distributions this test installed (and removes again)
    daemons: list[subprocess.Popen] = []
    outputs = []  # the daemons' stderr files

    def output(path):
        outputs.append(open(path, "w"))
        return outputs[-1]

    try:
        added = install_slurm_extra()
        munge = pwd.getpwnam("munge")
        munge_dir = base / "munge"
        munge_dir.mkdir(mode=0o755)
        key = munge_dir / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        for path in (munge_dir, key):
            os.chown(path, munge.pw_uid, munge.pw_gid)
        munge_socket = munge_dir / "munge.socket"
        daemons.append(subprocess.Popen(
            [program("munged"), "--foreground", "--force", f"--key-file={key}", f"--socket={munge_socket}",
             f"--pid-file={munge_dir}/munged.pid", f"--log-file={munge_dir}/munged.log",
             f"--seed-file={munge_dir}/munged.seed"],
            user=munge.pw_uid, group=munge.pw_gid, extra_groups=[],
            stdout=subprocess.DEVNULL, stderr=output(base / "munged.out")))
        wait_for(munge_socket.exists, 30, "munged's socket", [base / "munged.out", munge_dir / "munged.log"])

        for folder in ("state", "spool"):
            (base / folder).mkdir()
        SYSTEM_CONF.parent.mkdir(parents=True, exist_ok=True)
        SYSTEM_CONF.write_text(slurm_conf(base, munge_socket))
        conf = ["-f", str(SYSTEM_CONF)]
        daemons.append(subprocess.Popen([program("slurmctld"), "-D", "-c", *conf], env=env,
                                        stdout=subprocess.DEVNULL, stderr=output(base / "slurmctld.out")))
        daemons.append(subprocess.Popen([program("slurmd"), "-D", *conf], env=env,
                                        stdout=subprocess.DEVNULL, stderr=output(base / "slurmd.out")))

        def node_idle():
            for daemon in daemons:
                if daemon.poll() is not None:
                    pytest.fail(f"{daemon.args[0]} exited with {daemon.returncode}: " + "\n".join(
                        Path(p).read_text(errors="replace")[-2000:] for p in sorted(base.glob("*.out")) +
                        sorted(base.glob("*.log")) if Path(p).exists()))
            state = subprocess.run([program("sinfo"), "-h", "-N", "-o", "%T"], env=env, capture_output=True,
                                   text=True)
            return state.returncode == 0 and state.stdout.strip() == "idle"

        wait_for(node_idle, 90, "the node to be idle",
                 [base / "slurmctld.log", base / "slurmd.log", base / "slurmctld.out", base / "slurmd.out"])
        yield env
    finally:
        if daemons:
            subprocess.run([program("scancel") or "scancel", "--user", "root"], env=env, capture_output=True)
        for daemon in reversed(daemons):  # by process id, the ones started here
            if daemon.poll() is None:
                os.kill(daemon.pid, signal.SIGTERM)
                try:
                    daemon.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.kill(daemon.pid, signal.SIGKILL)
                    daemon.wait()
        for out in outputs:
            out.close()
        if SYSTEM_CONF.exists() and SYSTEM_CONF.read_text(errors="replace").startswith(MARKER):
            SYSTEM_CONF.unlink()
        shutil.rmtree(base, ignore_errors=True)
        if added:
            subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", "--quiet", *added],
                           capture_output=True)


def run_on_slurm(env, slurm_dir: Path, started: float) -> None:
    """Run the README's SLURM command on the targets and check that each shell rule ran as a SLURM job."""
    try:
        # Targets first: `--config` takes every word after it.
        result = subprocess.run([SNAKEMAKE, *TARGETS, *SLURM_RUN, *AUTHORS], cwd=slurm_dir, env=env,
                                capture_output=True, text=True, timeout=max(60, 540 - (time.monotonic() - started)))
    except subprocess.TimeoutExpired as err:
        queue = subprocess.run(["squeue"], env=env, capture_output=True, text=True).stdout
        stderr = err.stderr.decode(errors="replace") if isinstance(err.stderr, bytes) else err.stderr or ""
        pytest.fail(f"the SLURM run timed out; squeue:\n{queue}\n{stderr[-3000:]}")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "SLURM run ID" in result.stdout + result.stderr, result.stderr[-2000:]

    slurm_logs = slurm_dir / "logs" / "slurm"
    for rule in SHELL_RULES:
        assert list((slurm_logs / f"rule_{rule}").rglob("*.log")), f"no SLURM job log of rule {rule}"


def test_smoke_workflow_on_slurm_matches_a_local_run_byte_for_byte(tmp_path, await_smoke_project):
    """The SLURM run (mostly waiting on the cluster's polling) runs while the local smoke build does,
    and is compared with it once that is done."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    started = time.monotonic()
    slurm_dir = copy_project(tmp_path / "slurm")
    with slurm_cluster() as env:
        run_on_slurm(env, slurm_dir, started)
    local_digests, slurm_digests = digests(await_smoke_project()), digests(slurm_dir)
    assert set(TARGETS) <= slurm_digests.keys() <= local_digests.keys()
    assert [k for k in slurm_digests if local_digests[k] != slurm_digests[k]] == []
