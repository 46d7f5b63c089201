"""Warm starts: a workflow's jobs run as forks of one process that has already imported their libraries.

Every job is a new Python process, and before it computes anything it imports PyTorch, NumPy,
pandas and the project, and loads Numba's compiled kernels: more than a second, where a sweep
point's whole work is a few seconds (docs/speed.md). Run as `python -m rlstudy.runtime.warmstart
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

What a local process could send it or name for it (tests/unit/runtime/test_hostile_warmstart.py): the
server and its clients use only `socket` in a folder named, made and owned as begin() makes it (mode
0700), so WARM_SOCKET naming any other file runs every job cold and the file is left as it was; a
request must come whole within REQUEST_DEADLINE_S, while the server goes on serving other clients;
every message is framed by its length, and bytes of the next one are kept for it; a request without
its keys, or with keys of the wrong type, is refused; staleness is judged by the sources' contents.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import json
import os
import re
import runpy
import selectors
import signal
import socket
import stat
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
# A job's client sends its request as soon as it connects: a peer that has not sent it whole by then is
# dropped (its job, if it is one, runs cold), and never holds up another.
REQUEST_DEADLINE_S = 10.0
MAX_PENDING = 64  # connections whose request has not all come; jobs run at most one per core
MAX_MESSAGE_BYTES = 1 << 20  # a request holds the job's environment: kilobytes
SOCKET_NAME = "socket"
FOLDER_PREFIX = "rlstudy-warm-"
FOLDER_NAME = re.compile(re.escape(FOLDER_PREFIX) + r"[a-z0-9_]{8}")  # tempfile.mkdtemp's: the prefix, 8 characters
FOLDER_GONE = "its folder is gone"
# Variables a shell sets for itself: they differ between jobs and no library reads them.
SHELL_OWN = frozenset({"_", "SHLVL", "PWD", "OLDPWD"})
STEP_MODULE = re.compile(r"rlstudy(\.[A-Za-z_]\w*)*\.cli\.[A-Za-z_]\w*")
PACKAGE = Path(__file__).resolve().parents[1]  # src/rlstudy
WARM_UP_MODULE = "warmup"  # rlstudy/<study>/warmup.py: its warm_up() readies more than the study's steps
STEPS_PACKAGE = "cli"  # rlstudy/<study>/cli/: the study's steps, every rule's MODULE


# ---- what the server loads, and what makes it stale ----------------------------------------------

def warmed_studies() -> list[tuple[str, bool, bool]]:
    """The subpackages of rlstudy the server readies, sorted, each with whether it has steps
    (`rlstudy/<study>/cli/`) and whether it has a warm-up hook (`rlstudy/<study>/warmup.py`, for what its
    jobs load beyond their imports: bellman's compiled kernels). Found by their files, so the server
    names no study: a new study edits only itself, and adds a hook only for more than its steps."""
    found = []
    for folder in sorted(PACKAGE.iterdir(), key=lambda folder: folder.name):
        steps, hook = (folder / STEPS_PACKAGE / "__init__.py").is_file(), (folder / f"{WARM_UP_MODULE}.py").is_file()
        if (folder / "__init__.py").is_file() and (steps or hook):
            found.append((f"rlstudy.{folder.name}", steps, hook))
    return found


def warm_up(study: str, steps: bool, hook: bool) -> None:
    """Ready one study as its jobs would ready themselves: import its steps (core.cli.import_steps: PyTorch,
    NumPy, pandas, SciPy, Matplotlib, gymnasium come with them), then run its warm-up hook, if it has one."""
    from rlstudy.core.cli import import_steps

    if steps:
        import_steps(study)
    if hook:
        importlib.import_module(f"{study}.{WARM_UP_MODULE}").warm_up()


def preload() -> None:
    """Ready every study (warmed_studies, warm_up) and read the config schema."""
    import matplotlib

    matplotlib.use("Agg")  # the figure steps' backend (plotting/style.py), before any step imports pyplot
    for study, steps, hook in warmed_studies():
        warm_up(study, steps, hook)
    from rlstudy.core import config

    config.schema()


def source_files() -> list[Path]:
    """Every source file of the package (the hooks and all they import from it), and the config schema
    that preload read."""
    from rlstudy.core.config import schema_file

    return [*sorted(PACKAGE.rglob("*.py")), schema_file()]


def source_fingerprint() -> str:
    """The sha256 of those files' names and contents: a server whose files changed is stale. By content,
    not size and mtime, which an edit can keep (`touch -r`); reading them all costs a few milliseconds."""
    digest = hashlib.sha256()
    for path in source_files():
        data = path.read_bytes()
        digest.update(os.fsencode(path) + b"\0" + struct.pack("!Q", len(data)))
        digest.update(data)
    return digest.hexdigest()


def comparable(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in SHELL_OWN}


def threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1  # not Linux: unknown, so never forked


# ---- where the socket may be ------------------------------------------------------------------------

def socket_folder() -> Path:
    """A new folder for a socket, that only this user can enter (begin(); the tests)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))


def socket_path_refusal(path: str) -> str | None:
    """Why neither the server nor a client may use `path` (None: they may): only `socket` in a folder
    named as socket_folder() names it, a directory of this user's that no one else may enter, and the
    socket itself absent or a socket. Anything else WARM_SOCKET names (a file, a link, another user's
    folder) is left as it is."""
    if not os.path.isabs(path) or os.path.normpath(path) != path:
        return "not an absolute, normalised path"
    folder = os.path.dirname(path)
    if os.path.basename(path) != SOCKET_NAME or not FOLDER_NAME.fullmatch(os.path.basename(folder)):
        return f"not {FOLDER_PREFIX}XXXXXXXX/{SOCKET_NAME}, as begin() names it"
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return FOLDER_GONE
    except OSError as error:
        return f"its folder: {error.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return "its folder is not a directory"
    if info.st_uid != os.getuid():
        return "its folder belongs to another user"
    if stat.S_IMODE(info.st_mode) != 0o700:
        return f"its folder's mode is {stat.S_IMODE(info.st_mode):o}, not 700"
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"{error.strerror}"
    if not stat.S_ISSOCK(info.st_mode):
        return "it names something other than a socket"
    return None


# ---- the wire: a length-prefixed JSON message, the job's standard streams passed along with it -------

class ProtocolError(Exception):
    """A message that is not one: too long, not JSON, not a JSON object."""


def frame(message: dict) -> bytes:
    data = json.dumps(message).encode()
    return struct.pack("!I", len(data)) + data


def send(conn: socket.socket, message: dict, fds: list[int] = ()) -> None:
    payload = frame(message)
    if fds:
        sent = socket.send_fds(conn, [payload], list(fds))
        if sent < len(payload):  # (never a send of nothing: to a server that has answered and closed, EPIPE)
            conn.sendall(payload[sent:])
    else:
        conn.sendall(payload)


class Inbox:
    """What one connection has received so far: bytes, cut into messages by their length prefixes (the
    bytes of a following message stay for it: the job's pid and exit status can come in one read), and
    the descriptors that came with them."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.fds: list[int] = []

    def feed(self, chunk: bytes, fds: list[int] = ()) -> None:
        self.data += chunk
        self.fds += fds

    def message(self) -> dict | None:
        """The next whole message, taken out; None while it has not all come."""
        if len(self.data) < 4:
            return None
        length = struct.unpack("!I", self.data[:4])[0]
        if length > MAX_MESSAGE_BYTES:
            raise ProtocolError(f"a message of {length} bytes (at most {MAX_MESSAGE_BYTES})")
        if len(self.data) < 4 + length:
            return None
        body = bytes(self.data[4:4 + length])
        del self.data[:4 + length]
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as error:  # (UnicodeDecodeError is a ValueError)
            raise ProtocolError(f"not JSON ({type(error).__name__})") from None
        if not isinstance(message, dict):
            raise ProtocolError(f"a JSON {type(message).__name__}, not an object")
        return message

    def close_fds(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def receive(conn: socket.socket, inbox: Inbox) -> dict | None:
    """The next message on a blocking connection; None when the peer closed first."""
    while (message := inbox.message()) is None:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return None
        inbox.feed(chunk)
    return message


# ---- the client: every job's command ----------------------------------------------------------------

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


# ---- the server -------------------------------------------------------------------------------------

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


def run_child(conn: socket.socket, request: dict, fds: list[int], imported_env: dict[str, str]) -> None:
    """In the fork: become `python -m MODULE ARGS` in the job's streams, directory and environment (and
    what the server's imports set in it, as the job's own would have); send the exit status back. Never
    returns: whatever fails ends the fork, which must not go on as a second server."""
    status = 1
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
            now = time.monotonic()
            for client in [c for c in self.pending.values() if c.deadline <= now]:
                self.refuse(client, f"no whole request within {REQUEST_DEADLINE_S:g} s")
            if now >= next_check:
                if self.should_exit():
                    break
                next_check = now + POLL_S
        for client in list(self.pending.values()):  # their jobs run cold
            self.forget(client)
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
            pid = os.fork()
        except OSError as error:
            return f"cannot fork: {error}"
        if pid == 0:
            try:
                self.listener.close()
                self.selector.close()
                for other in self.pending.values():
                    if other is not client:
                        other.close()
                run_child(client.conn, request, client.inbox.fds, self.imported_env)
            finally:
                os._exit(1)
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
    # What the imports set (gymnasium's PYGAME_HIDE_SUPPORT_PROMPT, say): a cold job's imports set it too.
    imported_env = {k: v for k, v in os.environ.items() if k not in SHELL_OWN and env.get(k) != v}
    print(f"warmstart: server {os.getpid()} serving {path} after {time.perf_counter() - started:.1f} s of imports "
          f"({threads()} thread(s))", flush=True)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the forks are reaped by the kernel
    server = Server(listener, path, owner, env, cwd, fingerprint, imported_env)
    server.run()
    print(f"warmstart: served {server.served} job(s); exiting", flush=True)
    listener.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        client(sys.argv[1:])
