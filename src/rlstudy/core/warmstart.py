"""Warm starts: a workflow's jobs run as forks of one process that has already imported their libraries.

Every job is a new Python process, and before it computes anything it imports PyTorch, NumPy,
pandas and the project, and loads Numba's compiled kernels: more than a second, where a sweep
point's whole work is a few seconds (docs/speed.md). Run as `python -m rlstudy.core.warmstart
MODULE ARGS...` (every rule's command), a job asks a server of this workflow run to fork it from a
process that has done all that once. The fork runs `python -m MODULE ARGS...` as a fresh process would: same module, arguments,
working directory, environment, standard streams and exit status, and the same bits (a test
compares a warm run's artefacts with a cold one's). Wherever a warm start could differ, the job
starts cold instead, exactly as `python -m MODULE ARGS...`:

- no server: the command run by hand, a job on a cluster node, or the first job of a run (which
  starts the server for the jobs after it);
- another environment (a job given more threads: Snakemake sets OMP_NUM_THREADS and its kin per
  job) or working directory: libraries read both when they load;
- a source file of the project changed since the server loaded it (the server then exits);
- a server that is not single-threaded (fork copies one thread only).

The Snakefile's `onstart` names a socket in a private temporary folder (WARM_SOCKET); `onsuccess`
and `onerror` remove the folder, and the server exits once its socket is gone, once Snakemake's
process is (WARM_OWNER), or after IDLE_EXIT_S without a job. Set RLSTUDY_WARM_START=0 to run every
job cold.
"""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import re
import runpy
import signal
import socket
import struct
import subprocess
import sys
import time
import traceback
from pathlib import Path

WARM_SOCKET = "RLSTUDY_WARM_SOCKET"  # the socket's path, set by the Snakefile's onstart
WARM_OWNER = "RLSTUDY_WARM_OWNER"  # the pid of the Snakemake process that owns the server
OPT_OUT = "RLSTUDY_WARM_START"  # "0": every job cold
SERVER_LOG = "logs/warmstart.log"  # in the workflow's directory: why a job started cold, if one did
IDLE_EXIT_S = 600
POLL_S = 2.0
# Variables a shell sets for itself: they differ between jobs and no library reads them.
SHELL_OWN = frozenset({"_", "SHLVL", "PWD", "OLDPWD"})
STEP_MODULE = re.compile(r"rlstudy(\.[A-Za-z_]\w*)*\.cli\.[A-Za-z_]\w*")
PACKAGE = Path(__file__).resolve().parents[1]  # src/rlstudy


# ---- what the server loads, and what makes it stale ----------------------------------------------

def preload() -> None:
    """Import every step's module (PyTorch, NumPy, pandas, SciPy, Matplotlib, gymnasium come with them)
    and load the compiled kernels (the network's trigonometry, the budget's finite-data loss), as each
    job would."""
    import matplotlib

    matplotlib.use("Agg")  # the figure steps' backend (plotting/style.py), before any step imports pyplot
    for path in sorted(PACKAGE.glob("*/cli/*.py")):
        if path.stem != "__init__":
            importlib.import_module(f"rlstudy.{path.parent.parent.name}.cli.{path.stem}")
    from rlstudy.bellman import budget_kernel, trig
    from rlstudy.core import config

    trig.warm_up()
    budget_kernel.warm_up()
    config.schema()


def source_fingerprint() -> list:
    """(path, size, mtime) of every source file of the package and of the config schema that preload
    read: a server whose files changed is stale."""
    from rlstudy.core.config import SCHEMA_PATH

    files = [*sorted(PACKAGE.rglob("*.py")), SCHEMA_PATH]
    return [(str(p), s.st_size, s.st_mtime_ns) for p in files for s in [p.stat()]]


def comparable(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in SHELL_OWN}


def threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1  # not Linux: unknown, so never forked


# ---- the wire: a length-prefixed JSON message, the job's standard streams passed along with it -------

def send(conn: socket.socket, message: dict, fds: list[int] = ()) -> None:
    data = json.dumps(message).encode()
    payload = struct.pack("!I", len(data)) + data
    if fds:
        socket.send_fds(conn, [payload], list(fds))
    else:
        conn.sendall(payload)


def receive(conn: socket.socket, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """A message and the descriptors sent with it; (None, []) when the peer closed first."""
    data, fds = b"", []
    while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
        if max_fds and not data:
            chunk, fds, _, _ = socket.recv_fds(conn, 1 << 16, max_fds)
        else:
            chunk = conn.recv(1 << 16)
        if not chunk:
            for fd in fds:
                os.close(fd)
            return None, []
        data += chunk
    return json.loads(data[4:]), fds


# ---- the client: every job's command ----------------------------------------------------------------

def run_cold(module: str, args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-m", module, *args])


def start_server() -> None:
    """Start the server for the jobs after this one, with this job's environment and directory."""
    Path(SERVER_LOG).parent.mkdir(parents=True, exist_ok=True)
    with open(SERVER_LOG, "ab") as log:
        subprocess.Popen([sys.executable, "-m", "rlstudy.core.warmstart", "--serve"], stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, start_new_session=True, close_fds=True)


def run_warm(path: str, module: str, args: list[str]) -> int | None:
    """The job's exit status, run by a fork of the server; None where it was not (then run it cold)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        if Path(path).parent.is_dir():
            start_server()
        return None
    with conn:
        try:
            send(conn, {"module": module, "args": args, "cwd": os.getcwd(), "env": dict(os.environ)}, [0, 1, 2])
            reply, _ = receive(conn)
        except OSError:
            return None
        if reply is None or "refused" in reply:
            return None
        child = reply["pid"]

        def forward(signum, _frame):
            try:
                os.kill(child, signum)
            except ProcessLookupError:  # it has just ended
                pass

        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, forward)
        reply, _ = receive(conn)
    if reply is None:
        print(f"warmstart: the job's process {child} ended without an exit status (killed?)", file=sys.stderr)
        return 1
    return reply["status"]


def client(argv: list[str]) -> None:
    if not argv or not STEP_MODULE.fullmatch(argv[0]):
        sys.exit("usage: python -m rlstudy.core.warmstart rlstudy.<study>.cli.<step> [options...]")
    module, args = argv[0], argv[1:]
    path = os.environ.get(WARM_SOCKET)
    if path and os.environ.get(OPT_OUT) != "0":
        status = run_warm(path, module, args)
        if status is not None:
            sys.exit(status)
    run_cold(module, args)


# ---- the workflow's side: the Snakefile's onstart, onsuccess and onerror ------------------------------

def begin() -> None:
    """Name this run's socket, in a folder only this user can enter; its jobs inherit the names."""
    if os.environ.get(OPT_OUT) != "0":
        import tempfile

        os.environ[WARM_SOCKET] = str(Path(tempfile.mkdtemp(prefix="rlstudy-warm-")) / "socket")
        os.environ[WARM_OWNER] = str(os.getpid())


def end() -> None:
    """Remove the run's socket folder: its server exits within POLL_S."""
    import shutil

    path = os.environ.pop(WARM_SOCKET, None)
    os.environ.pop(WARM_OWNER, None)
    if path:
        shutil.rmtree(Path(path).parent, ignore_errors=True)


# ---- the server -------------------------------------------------------------------------------------

def refusal(request: dict, env: dict, cwd: str, fingerprint: list) -> str | None:
    if not STEP_MODULE.fullmatch(request["module"]):
        return "not a step"
    if request["cwd"] != cwd:
        return "another working directory"
    theirs = comparable(request["env"])
    if theirs != env:
        differ = sorted(k for k in env.keys() | theirs.keys() if env.get(k) != theirs.get(k))
        return f"another environment ({', '.join(differ)})"
    if source_fingerprint() != fingerprint:
        return "stale: a source file changed"
    if threads() != 1:
        return "the server is not single-threaded"
    return None


def end_with_client(conn: socket.socket) -> None:
    """End this job once its client is gone (killed with the job's shell): a cold job would have died
    with it. The client closes only after it has the exit status, so a job that ended is unaffected."""
    import threading

    def watch():
        try:
            conn.recv(1)
        finally:
            os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def run_child(conn: socket.socket, request: dict, fds: list[int], imported_env: dict[str, str]) -> None:
    """In the fork: become `python -m MODULE ARGS` in the job's streams, directory and environment (and
    what the server's imports set in it, as the job's own would have); send the exit status back."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # subprocesses (git, for provenance) are waited for
    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"] | imported_env)
    status = 1
    try:
        send(conn, {"pid": os.getpid()})
        end_with_client(conn)
        sys.argv = ["-m", *request["args"]]  # as `python -m` leaves it until runpy sets argv[0]
        sys.modules.pop(request["module"], None)  # preloaded as a library: run afresh as __main__
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as exit_:
        code = exit_.code
        if code is None or isinstance(code, int):
            status = code or 0
        else:
            print(code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - reported as Python reports it, and the status is 1
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        try:
            send(conn, {"status": status})
        finally:
            os._exit(status)


def bind(path: str) -> socket.socket | None:
    """The listening socket, or None where a live server holds it (a server that died left its socket
    file behind: it is replaced). Listens at once: jobs that come while the server loads wait for it."""
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            return None
        except OSError:
            Path(path).unlink(missing_ok=True)
        finally:
            probe.close()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(16)
        return listener


def serve() -> None:
    path, owner = os.environ[WARM_SOCKET], int(os.environ.get(WARM_OWNER, "0"))
    listener = bind(path)
    if listener is None:
        return
    started = time.perf_counter()
    env, cwd = comparable(dict(os.environ)), os.getcwd()
    fingerprint = source_fingerprint()  # before the imports: a file edited while they run makes it stale
    preload()
    from rlstudy.core.process import imports_done

    imports_done()
    # What the imports set (gymnasium's PYGAME_HIDE_SUPPORT_PROMPT, say): a cold job's imports set it too.
    imported_env = {k: v for k, v in os.environ.items() if k not in SHELL_OWN and env.get(k) != v}
    print(f"warmstart: server {os.getpid()} serving {path} after {time.perf_counter() - started:.1f} s of imports "
          f"({threads()} thread(s))", flush=True)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the forks are reaped by the kernel
    listener.settimeout(POLL_S)
    last, served = time.monotonic(), 0
    while True:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            owner_gone = owner and not Path(f"/proc/{owner}").exists()
            if not os.path.exists(path) or owner_gone or time.monotonic() - last > IDLE_EXIT_S:
                break
            continue
        last = time.monotonic()
        conn.settimeout(None)
        request, fds = receive(conn, max_fds=3)
        if request is None:
            reason = "no request"
        elif len(fds) != 3:
            reason = "not the job's three standard streams"
        else:
            reason = refusal(request, env, cwd, fingerprint)
        if reason is None:
            sys.stdout.flush()
            if os.fork() == 0:
                listener.close()
                run_child(conn, request, fds, imported_env)
            served += 1
        elif request is not None:  # (None: a server's probe, bind())
            print(f"warmstart: refused {request['module']}: {reason}", flush=True)
            send(conn, {"refused": reason})
        for fd in fds:
            os.close(fd)
        conn.close()
        if reason and reason.startswith("stale"):
            break
    print(f"warmstart: served {served} job(s); exiting", flush=True)
    listener.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        client(sys.argv[1:])
