"""The warm-start server (`python -m rlstudy.runtime.warmstart --serve`): what it loads and what makes it
stale, and how it forks a job for each request it accepts (the package's docstring says when a job
runs cold instead)."""

from __future__ import annotations

import fcntl
import os
import runpy
import selectors
import signal
import socket
import sys
import time
import traceback
from pathlib import Path

from rlstudy.core import digests

from .preload import preload, source_fingerprint, threads
from .protocol import (
    IDLE_EXIT_S,
    Inbox,
    MAX_PENDING,
    POLL_S,
    ProtocolError,
    REQUEST_DEADLINE_S,
    SHELL_OWN,
    STEP_MODULE,
    WARM_OWNER,
    WARM_SOCKET,
    comparable,
    send,
    socket_path_refusal,
)
from .reports import Reports, send_report


REQUEST_TYPES = {"module": str, "args": list, "cwd": str, "env": dict}


def malformed(request: dict) -> str | None:
    """Why a request is not one a client sends (None: it is): its keys, their types."""
    for key, kind in REQUEST_TYPES.items():
        if key not in request:
            return f"malformed request: no '{key}'"
        if not isinstance(request[key], kind):
            return f"malformed request: '{key}' is a {type(request[key]).__name__}, not a {kind.__name__}"
    if extra := sorted(request.keys() - REQUEST_TYPES.keys()):
        return f"malformed request: unknown key(s) {', '.join(map(repr, extra))}"
    if not all(isinstance(arg, str) for arg in request["args"]):
        return "malformed request: 'args' holds a value that is not a string"
    if not all(isinstance(value, str) for value in request["env"].values()):
        return "malformed request: 'env' holds a value that is not a string"
    return None


def refusal(request: dict, env: dict, cwd: str, fingerprint: str) -> str | None:
    if not STEP_MODULE.fullmatch(request["module"]):
        return "not a step"
    if request["cwd"] != cwd:
        return "another working directory"
    theirs = comparable(request["env"])
    if theirs != env:
        differ = sorted(k for k in env.keys() | theirs.keys() if env.get(k) != theirs.get(k))
        return f"another environment ({', '.join(differ)})"
    try:
        if source_fingerprint() != fingerprint:
            return "stale: a source file changed"
    except OSError:
        return "stale: a source file is gone"
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


def run_child(conn: socket.socket, request: dict, fds: list[int], imported_env: dict[str, str], report: int) -> None:
    """In the fork: become `python -m MODULE ARGS` in the job's streams, directory and environment (and
    what the server's imports set in it, as the job's own would have); report the files it hashed to the
    server (reports.py), and send the exit status back. Never returns: whatever fails ends the fork, which
    must not go on as a second server."""
    status = 1
    digests.take_learned()  # (the server's own: it has them)
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # subprocesses (git, for provenance) are waited for
        send(conn, {"pid": os.getpid()})
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"] | imported_env)
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
        try:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            send_report(report)
            send(conn, {"status": status})
        finally:
            os._exit(status)


def bind(path: str) -> socket.socket | None:
    """The listening socket, or None where a live server holds it (a server that died left its socket
    file behind: it is replaced) or it cannot be made. Listens at once: jobs that come while the server
    loads wait for it. The lock is the folder itself: no file is opened but the socket."""
    folder = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            return None
        except OSError:
            pass
        finally:
            probe.close()
        refused = socket_path_refusal(path)  # again, under the lock: only a socket is ever removed
        if refused is not None:
            print(f"warmstart: not serving at {path}: {refused}", flush=True)
            return None
        if os.path.lexists(path):
            os.unlink(path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(path)
            listener.listen(16)
        except OSError as error:
            listener.close()
            print(f"warmstart: not serving at {path}: {error}", flush=True)
            return None
        return listener
    finally:
        os.close(folder)  # and with it the lock


class Pending:
    """A connection whose request has not all come: what came so far, and by when the rest must."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn, self.inbox = conn, Inbox()
        self.deadline = time.monotonic() + REQUEST_DEADLINE_S

    def read(self) -> dict | None:
        """The request once it has all come, None until then; EOFError when the peer closed first."""
        try:
            chunk, fds, flags, _ = socket.recv_fds(self.conn, 1 << 16, 3)
        except BlockingIOError:
            return None
        self.inbox.feed(chunk, fds)
        if flags & socket.MSG_CTRUNC or len(self.inbox.fds) > 3:  # (held open till refused: at most three)
            raise ProtocolError("more descriptors than the job's three standard streams")
        if not chunk:
            raise EOFError
        return self.inbox.message()

    def close(self) -> None:
        self.inbox.close_fds()
        self.conn.close()


class Server:
    """One thread, many connections: a poll over the listener and every connection whose request has not
    all come, so a slow or silent peer holds up no other. A whole request is answered at once: refused,
    or forked."""

    def __init__(self, listener: socket.socket, path: str, owner: int, env: dict[str, str], cwd: str,
                 fingerprint: str, imported_env: dict[str, str]) -> None:
        self.listener, self.path, self.owner = listener, path, owner
        self.env, self.cwd, self.fingerprint, self.imported_env = env, cwd, fingerprint, imported_env
        self.socket_inode = os.lstat(path).st_ino
        self.selector = selectors.PollSelector()  # no kernel state that a fork would share (epoll's)
        self.pending: dict[int, Pending] = {}
        self.reports = Reports(self.selector)
        self.served, self.stale = 0, False
        self.last = time.monotonic()

    def run(self) -> None:
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ)
        next_check = time.monotonic() + POLL_S
        while not self.stale:
            deadlines = [next_check, *(client.deadline for client in self.pending.values())]
            for key, _ in self.selector.select(max(0.0, min(deadlines) - time.monotonic())):
                if key.fileobj is self.listener:
                    self.accept()
                elif key.fd in self.pending:
                    self.read(self.pending[key.fd])
                elif key.fd in self.reports.received:
                    self.reports.read(key.fd)
            now = time.monotonic()
            for client in [c for c in self.pending.values() if c.deadline <= now]:
                self.refuse(client, f"no whole request within {REQUEST_DEADLINE_S:g} s")
            if now >= next_check:
                if self.should_exit():
                    break
                next_check = now + POLL_S
        for client in list(self.pending.values()):  # their jobs run cold
            self.forget(client)
        self.reports.close_all()
        self.selector.close()

    def should_exit(self) -> bool:
        try:
            if os.lstat(self.path).st_ino != self.socket_inode:
                return True  # another socket now: not ours to serve
        except OSError:
            return True
        owner_gone = self.owner and not Path(f"/proc/{self.owner}").exists()
        return bool(owner_gone) or (not self.pending and time.monotonic() - self.last > IDLE_EXIT_S)

    def accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:  # out of descriptors, say: those jobs run cold
                print(f"warmstart: cannot accept: {error}", flush=True)
                return
            self.last = time.monotonic()
            if len(self.pending) >= MAX_PENDING:
                print(f"warmstart: refused a connection: {MAX_PENDING} requests already coming", flush=True)
                conn.close()
                continue
            conn.setblocking(False)
            client = Pending(conn)
            self.pending[conn.fileno()] = client
            self.selector.register(conn, selectors.EVENT_READ)

    def read(self, client: Pending) -> None:
        try:
            request = client.read()
        except EOFError:
            if client.inbox.data or client.inbox.fds:
                print("warmstart: refused a request: the client closed before sending it whole", flush=True)
            self.forget(client)  # (with nothing sent: a server's probe, bind())
            return
        except (OSError, ProtocolError) as error:
            self.refuse(client, f"malformed request: {error}")
            return
        if request is None:
            return
        module = request.get("module") if isinstance(request.get("module"), str) else None
        reason = malformed(request)
        if reason is None and client.inbox.data:
            reason = "malformed request: bytes after it"
        if reason is None and len(client.inbox.fds) != 3:
            reason = "not the job's three standard streams"
        if reason is None:
            reason = refusal(request, self.env, self.cwd, self.fingerprint)
        if reason is None:
            reason = self.fork(client, request)
        if reason is not None:
            self.refuse(client, reason, module)
            self.stale = reason.startswith("stale")
        else:
            self.forget(client)

    def fork(self, client: Pending, request: dict) -> str | None:
        """Run the job in a fork; None once it is running, else why not."""
        sys.stdout.flush()
        client.conn.setblocking(True)
        try:
            ours, theirs = os.pipe()
        except OSError as error:
            return f"cannot make a pipe: {error}"
        try:
            pid = os.fork()
        except OSError as error:
            os.close(ours)
            os.close(theirs)
            return f"cannot fork: {error}"
        if pid == 0:
            try:
                self.listener.close()
                self.selector.close()
                for other in self.pending.values():
                    if other is not client:
                        other.close()
                self.reports.in_fork(ours)
                run_child(client.conn, request, client.inbox.fds, self.imported_env, theirs)
            finally:
                os._exit(1)
        self.reports.started(ours, theirs)
        self.served += 1
        return None

    def refuse(self, client: Pending, reason: str, module: str | None = None) -> None:
        print(f"warmstart: refused {module or 'a request'}: {reason}", flush=True)
        try:
            client.conn.setblocking(True)
            client.conn.settimeout(1.0)  # a few hundred bytes; a peer that reads nothing cannot hold us
            send(client.conn, {"refused": reason})
        except OSError:
            pass
        self.forget(client)

    def forget(self, client: Pending) -> None:
        self.selector.unregister(client.conn)
        del self.pending[client.conn.fileno()]
        client.close()


def serve() -> None:
    path = os.environ[WARM_SOCKET]
    refused = socket_path_refusal(path)
    if refused is not None:
        print(f"warmstart: not serving at {path}: {refused}", flush=True)
        return
    owner = os.environ.get(WARM_OWNER, "")
    owner = int(owner) if owner.isdigit() else 0
    listener = bind(path)
    if listener is None:
        return
    started = time.perf_counter()
    env, cwd = comparable(dict(os.environ)), os.getcwd()
    fingerprint = source_fingerprint()  # before the imports: a file edited while they run makes it stale
    preload()
    from rlstudy.core.process import imports_done

    imports_done()
    digests.take_learned()  # (the forks report only what they learn)
    # What the imports set (gymnasium's PYGAME_HIDE_SUPPORT_PROMPT, say): a cold job's imports set it too.
    imported_env = {k: v for k, v in os.environ.items() if k not in SHELL_OWN and env.get(k) != v}
    print(f"warmstart: server {os.getpid()} serving {path} after {time.perf_counter() - started:.1f} s of imports "
          f"({threads()} thread(s))", flush=True)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the forks are reaped by the kernel
    server = Server(listener, path, owner, env, cwd, fingerprint, imported_env)
    server.run()
    print(f"warmstart: served {server.served} job(s); exiting", flush=True)
    listener.close()
