"""The warm start's client, every job's command (`python -m rlstudy.runtime.warmstart MODULE ARGS...`:
run warm by a fork of the server, or cold), and the workflow's side of it (the Snakefile's onstart,
onsuccess and onerror: begin and end)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from .protocol import (
    FOLDER_GONE,
    Inbox,
    OPT_OUT,
    ProtocolError,
    SERVER_LOG,
    SOCKET_NAME,
    STEP_MODULE,
    WARM_OWNER,
    WARM_SOCKET,
    receive,
    send,
    socket_folder,
    socket_path_refusal,
)

def run_cold(module: str, args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-m", module, *args])


def log(line: str) -> None:
    """A line of the server's log (logs/warmstart.log of the job's directory), from a client."""
    Path(SERVER_LOG).parent.mkdir(parents=True, exist_ok=True)
    with open(SERVER_LOG, "a") as file:
        print(line, file=file)


def start_server() -> None:
    """Start the server for the jobs after this one, with this job's environment and directory."""
    Path(SERVER_LOG).parent.mkdir(parents=True, exist_ok=True)
    with open(SERVER_LOG, "ab") as log_file:
        subprocess.Popen([sys.executable, "-m", "rlstudy.runtime.warmstart", "--serve"], stdin=subprocess.DEVNULL,
                         stdout=log_file, stderr=log_file, start_new_session=True, close_fds=True)


def run_warm(path: str, module: str, args: list[str]) -> int | None:
    """The job's exit status, run by a fork of the server; None where it was not (then run it cold)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        start_server()
        return None
    inbox, forwarded = Inbox(), {}
    try:
        with conn:
            try:
                send(conn, {"module": module, "args": args, "cwd": os.getcwd(), "env": dict(os.environ)}, [0, 1, 2])
                reply = receive(conn, inbox)
            except (OSError, ProtocolError):
                return None
            if reply is None or not isinstance(reply.get("pid"), int):
                return None  # refused, or no fork: run it cold
            child = reply["pid"]

            def forward(signum, _frame):
                try:
                    os.kill(child, signum)
                except ProcessLookupError:  # it has just ended
                    pass

            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                forwarded[signum] = signal.signal(signum, forward)
            try:
                reply = receive(conn, inbox)
            except (OSError, ProtocolError):
                reply = None
    finally:
        for signum, handler in forwarded.items():
            if handler is not None:  # (None: not set from Python)
                signal.signal(signum, handler)
    if reply is None or not isinstance(reply.get("status"), int):
        print(f"warmstart: the job's process {child} ended without an exit status (killed?)", file=sys.stderr)
        return 1
    return reply["status"]


def client(argv: list[str]) -> None:
    if not argv or not STEP_MODULE.fullmatch(argv[0]):
        sys.exit("usage: python -m rlstudy.runtime.warmstart rlstudy.<study>.cli.<step> [options...]")
    module, args = argv[0], argv[1:]
    path = os.environ.get(WARM_SOCKET)
    if path and os.environ.get(OPT_OUT) != "0":
        refused = socket_path_refusal(path)
        if refused is None:
            status = run_warm(path, module, args)
            if status is not None:
                sys.exit(status)
        elif refused != FOLDER_GONE:  # (gone: the workflow run has ended, and with it the warm starts)
            log(f"warmstart: {module} ran cold: {WARM_SOCKET} {path}: {refused}")
    run_cold(module, args)


# ---- the workflow's side: the Snakefile's onstart, onsuccess and onerror ------------------------------

_begun: str | None = None  # the socket begin() named, in a folder it made: the only one end() removes


def begin() -> None:
    """Name this run's socket, in a folder only this user can enter; its jobs inherit the names."""
    global _begun
    if os.environ.get(OPT_OUT) != "0":
        _begun = str(socket_folder() / SOCKET_NAME)
        os.environ[WARM_SOCKET] = _begun
        os.environ[WARM_OWNER] = str(os.getpid())


def end() -> None:
    """Remove the run's socket folder, the one begin() made, whatever WARM_SOCKET names now: its server
    exits within POLL_S."""
    import shutil

    global _begun
    if _begun is None:
        return  # (RLSTUDY_WARM_START=0: a WARM_SOCKET of the environment is not this run's to remove)
    if os.environ.get(WARM_SOCKET) == _begun:
        os.environ.pop(WARM_SOCKET, None)
        os.environ.pop(WARM_OWNER, None)
    shutil.rmtree(os.path.dirname(_begun), ignore_errors=True)  # (a link there: rmtree refuses it)
    _begun = None
