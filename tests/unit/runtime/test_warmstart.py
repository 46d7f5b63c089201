"""runtime/warmstart/: a job forked from the warm server writes the bytes a new interpreter writes, with
its exit status and streams; the first job starts the server and runs cold; anything a warm start could
get wrong (another environment or directory, a changed source file) runs cold; the server exits once
its socket folder is gone. (The smoke build runs warm, and its every-rule rebuild runs cold: the
workflow tests compare the two byte for byte.)"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlstudy.runtime.warmstart import preload as warm_preload, protocol as warm_protocol, server as warm_server

PROBLEM = '{"dynamics": {"dt": 0.19634954084936207, "reward_of": "current", "sigma": 0.2}, "gamma": 0.9}'
TRAJECTORY = ["rlstudy.bellman.cli.make_trajectory", "--task", "control", "--size", "short", "--steps", "2000",
              "--dynamics", '{"dt": 0.19634954084936207, "reward_of": "current", "sigma": 0.2}', "--seed", "7"]


def job(workdir: Path, env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rlstudy.runtime.warmstart", *argv], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=120)


def server_log(workdir: Path) -> str:
    path = workdir / warm_protocol.SERVER_LOG
    return path.read_text() if path.exists() else ""


def wait_for(condition, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.2)


@pytest.fixture
def warm(tmp_path):
    """A working directory and the environment of a workflow run's jobs (what onstart sets); the server's
    socket folder is removed afterwards, so the server exits."""
    socket_dir = warm_protocol.socket_folder()  # the only kind of folder the server serves in
    env = {**os.environ, warm_protocol.WARM_SOCKET: str(socket_dir / "socket"), warm_protocol.WARM_OWNER: str(os.getpid())}
    env.pop(warm_protocol.OPT_OUT, None)
    yield tmp_path, env
    import shutil

    shutil.rmtree(socket_dir, ignore_errors=True)
    if "serving" in server_log(tmp_path):
        wait_for(lambda: "exiting" in server_log(tmp_path), 10 * warm_protocol.POLL_S)


def test_warm_jobs_write_the_bytes_of_cold_ones_and_the_first_job_starts_the_server(warm):
    workdir, env = warm
    cold = job(workdir, {**env, warm_protocol.OPT_OUT: "0"}, *TRAJECTORY, "--out-dir", "cold")
    assert cold.returncode == 0, cold.stderr
    first = job(workdir, env, *TRAJECTORY, "--out-dir", "first")  # no server yet: cold, and starts it
    assert first.returncode == 0, first.stderr
    wait_for(lambda: "serving" in server_log(workdir))
    for name in ("second", "third"):
        result = job(workdir, env, *TRAJECTORY, "--out-dir", name)
        assert result.returncode == 0, result.stderr
    exact = job(workdir, env, "rlstudy.bellman.cli.solve_exact", "--task", "control", "--problem", PROBLEM,
                "--rtol", "1e-3", "--out-dir", "exact_warm")
    exact_cold = job(workdir, {**env, warm_protocol.OPT_OUT: "0"}, "rlstudy.bellman.cli.solve_exact", "--task",
                     "control", "--problem", PROBLEM, "--rtol", "1e-3", "--out-dir", "exact_cold")
    assert exact.returncode == exact_cold.returncode == 0, exact.stderr + exact_cold.stderr
    assert exact.stdout == exact_cold.stdout
    os.remove(env[warm_protocol.WARM_SOCKET])  # the server exits once its socket is gone
    wait_for(lambda: "exiting" in server_log(workdir), 10 * warm_protocol.POLL_S)
    assert "served 3 job(s)" in server_log(workdir), server_log(workdir)
    for folder, reference in (("first", "cold"), ("second", "cold"), ("third", "cold"), ("exact_warm", "exact_cold")):
        files = sorted(p.name for p in (workdir / reference).iterdir())
        assert files == sorted(p.name for p in (workdir / folder).iterdir())
        for name in files:
            theirs, ours = (workdir / reference / name).read_bytes(), (workdir / folder / name).read_bytes()
            if name.endswith(".provenance.json"):  # the command names its own --out-dir
                theirs, ours = theirs.replace(reference.encode(), b"X"), ours.replace(folder.encode(), b"X")
            assert theirs == ours, f"{folder}/{name}"


def test_a_warm_job_keeps_its_exit_status_and_error_and_other_environments_run_cold(warm):
    workdir, env = warm
    job(workdir, env, "rlstudy.bellman.cli.solve_exact", "--help")  # starts the server
    wait_for(lambda: "serving" in server_log(workdir))
    bad = job(workdir, env, "rlstudy.bellman.cli.solve_exact", "--task", "control", "--problem", "{}",
              "--rtol", "1e-3", "--out-dir", "x")
    cold_bad = job(workdir, {**env, warm_protocol.OPT_OUT: "0"}, "rlstudy.bellman.cli.solve_exact", "--task",
                   "control", "--problem", "{}", "--rtol", "1e-3", "--out-dir", "x")
    assert bad.returncode == cold_bad.returncode == 2
    assert bad.stderr == cold_bad.stderr and "dynamics" in bad.stderr
    threads = job(workdir, {**env, "OMP_NUM_THREADS": "2"}, "rlstudy.bellman.cli.solve_exact", "--help")
    assert threads.returncode == 0 and "usage" in threads.stdout
    wait_for(lambda: "another environment (OMP_NUM_THREADS)" in server_log(workdir))
    assert job(workdir, env, "os").returncode != 0  # only the package's steps


def children(pid: int) -> list[int]:
    """The live processes whose parent is pid (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def test_a_warm_job_ends_with_its_client(warm):
    """Snakemake killing a job kills its client: the fork must not run on, writing outputs unwatched."""
    workdir, env = warm
    job(workdir, env, "rlstudy.bellman.cli.solve_exact", "--help")  # starts the server
    wait_for(lambda: "serving" in server_log(workdir))
    server = int(re.search(r"server (\d+) serving", server_log(workdir)).group(1))
    long_job = [arg if arg != "2000" else "20000000" for arg in TRAJECTORY]  # several seconds
    client = subprocess.Popen([sys.executable, "-m", "rlstudy.runtime.warmstart", *long_job, "--out-dir", "long"],
                              cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: children(server))
    client.kill()
    client.wait()
    wait_for(lambda: not children(server), 10)
    assert not (workdir / "long").exists() or not any((workdir / "long").iterdir())


def test_the_server_refuses_what_a_fork_could_get_wrong(monkeypatch):
    monkeypatch.setattr(warm_server, "threads", lambda: 1)  # as the server's (the test runner's are several)
    env, cwd, fingerprint = {"A": "1"}, "/work", warm_preload.source_fingerprint()
    request = {"module": "rlstudy.bellman.cli.run_method", "cwd": cwd, "env": {"A": "1", "SHLVL": "3"}}
    assert warm_server.refusal(request, env, cwd, fingerprint) is None
    assert warm_server.refusal({**request, "module": "subprocess"}, env, cwd, fingerprint) == "not a step"
    assert warm_server.refusal({**request, "cwd": "/"}, env, cwd, fingerprint) == "another working directory"
    assert warm_server.refusal({**request, "env": {"A": "2"}}, env, cwd, fingerprint) == "another environment (A)"
    assert warm_server.refusal(request, env, cwd, "0" * 64).startswith("stale")
    monkeypatch.setattr(warm_server, "threads", lambda: 2)  # fork would copy one of them
    assert warm_server.refusal(request, env, cwd, fingerprint) == "the server is not single-threaded"


def test_the_server_finds_each_study_s_steps_and_warm_up_hook_by_their_files(tmp_path, monkeypatch):
    """The server names no study: a subpackage with steps (`cli/`) or a `warmup` module is readied,
    whatever its name."""
    for folder, files in {"alpha": ["__init__.py", "warmup.py", "cli/__init__.py"], "beta": ["__init__.py"],
                          "delta": ["__init__.py", "cli/__init__.py"], "loose": ["warmup.py"],
                          "gamma": ["__init__.py", "warmup.py"]}.items():
        for name in files:
            (tmp_path / folder / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / folder / name).write_text("")
    monkeypatch.setattr(warm_preload, "PACKAGE", tmp_path)
    assert warm_preload.warmed_studies() == [("rlstudy.alpha", True, True), ("rlstudy.delta", True, False),
                                          ("rlstudy.gamma", False, True)]


def test_a_study_s_steps_are_imported_and_its_hook_runs_after_them(monkeypatch):
    """No study needs a hook to have its steps preloaded; one that has a hook gets it run after them."""
    import sys
    import types

    from rlstudy.core import cli

    calls = []
    monkeypatch.setattr(cli, "import_steps", lambda study: calls.append(("steps", study)))
    for study in ("rlstudy.alpha", "rlstudy.gamma"):
        hook = types.ModuleType(f"{study}.warmup")
        hook.warm_up = lambda study=study: calls.append(("hook", study))
        monkeypatch.setitem(sys.modules, hook.__name__, hook)
    for study, steps, hook in [("rlstudy.alpha", True, True), ("rlstudy.delta", True, False),
                               ("rlstudy.gamma", False, True)]:
        warm_preload.warm_up(study, steps, hook)
    assert calls == [("steps", "rlstudy.alpha"), ("hook", "rlstudy.alpha"), ("steps", "rlstudy.delta"),
                     ("hook", "rlstudy.gamma")]


def test_every_study_with_steps_is_preloaded_and_the_digest_covers_it():
    """Every study's steps are preloaded, and bellman's hook loads its compiled kernels; the staleness
    digest reads every file of the package (the steps, the hooks and all they import from it) and the
    schema that preload reads."""
    import importlib

    from rlstudy.core.config import schema_file

    studies = sorted(path.parent.parent.name for path in warm_preload.PACKAGE.glob("*/cli/__init__.py"))
    warmed = warm_preload.warmed_studies()
    assert studies and [study for study, steps, _ in warmed if steps] == [f"rlstudy.{study}" for study in studies]
    assert ("rlstudy.bellman", True, True) in warmed
    for study, _, hook in warmed:
        assert not hook or callable(importlib.import_module(f"{study}.{warm_preload.WARM_UP_MODULE}").warm_up)
    digested = warm_preload.source_files()
    assert schema_file() in digested and schema_file().is_file()
    assert set(warm_preload.PACKAGE.rglob("*.py")) <= set(digested)


def test_import_steps_imports_each_step_module_of_a_study():
    import sys

    from rlstudy.core.cli import import_steps

    names = import_steps("rlstudy.claims")
    folder = warm_preload.PACKAGE / "claims" / "cli"
    assert names == [f"rlstudy.claims.cli.{p.stem}" for p in sorted(folder.glob("*.py")) if p.stem != "__init__"]
    assert names and all(name in sys.modules for name in names)


def test_the_files_a_job_hashed_reach_the_server_and_a_report_that_is_not_one_is_dropped(tmp_path, monkeypatch,
                                                                                         capsys):
    """reports.py, in one process: the job's end of its pipe is a copy, as a fork's would be."""
    import selectors

    from rlstudy.core import digests
    from rlstudy.runtime.warmstart import reports

    monkeypatch.setattr(digests, "_remembered", {})
    monkeypatch.setattr(digests, "_learned", {})
    monkeypatch.setattr(digests, "SETTLED_NS", -10**18)  # as if written long ago
    selector = selectors.PollSelector()
    server = reports.Reports(selector)

    def job(work) -> None:
        ours, theirs = os.pipe()
        jobs_end = os.dup(theirs)
        server.started(ours, theirs)
        work(jobs_end)
        while server.received:
            for key, _ in selector.select(5):
                server.read(key.fd)

    path = tmp_path / "states.npy"
    path.write_bytes(b"1" * 3000)
    digest = digests.sha256_file(path)
    digests._remembered.clear()  # the server's memory, which the fork's copy added to
    job(reports.send_report)
    assert list(digests._remembered.values()) == [digest]

    def malformed(fd):
        os.write(fd, b'[[1, 2, 3]]')
        os.close(fd)

    job(malformed)
    job(os.close)  # a job that ended before it reported
    assert len(digests._remembered) == 1
    assert capsys.readouterr().out.count("a job's report of the files it hashed is not one") == 1
    selector.close()
