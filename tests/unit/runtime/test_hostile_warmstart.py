"""What a local process could send the warm-start server (runtime/warmstart/) or name for it: a socket path
naming an ordinary file, a client that stalls halfway through its request, two replies in one read, a
request without its keys, an edit that keeps a source file's size and mtime.

The server tests run the real server's loop and refusals in a new process, with preload() left out
(seconds of imports that none of these cases needs) and a short request deadline."""

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rlstudy.runtime.warmstart import client as warm_client, preload as warm_preload, protocol as warm_protocol, server as warm_server

STEP = "rlstudy.bellman.cli.make_trajectory"
DEADLINE_S = 1.0
SERVER = f"""
import sys
from pathlib import Path
from rlstudy.runtime.warmstart import preload as warm_preload, server as warm_server

warm_server.preload = lambda: None
warm_server.REQUEST_DEADLINE_S = {DEADLINE_S}
if sys.argv[1:]:
    warm_preload.source_files = lambda: [Path(sys.argv[1])]
warm_server.serve()
"""


def wait_for(condition, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


class Server:
    """A server process on a socket of its own folder, its log, and what a request to it must hold."""

    def __init__(self, workdir: Path, sources: Path | None = None):
        self.folder = warm_protocol.socket_folder()
        self.path = str(self.folder / warm_protocol.SOCKET_NAME)
        self.env = {**os.environ, warm_protocol.WARM_SOCKET: self.path, warm_protocol.WARM_OWNER: str(os.getpid())}
        self.env.pop(warm_protocol.OPT_OUT, None)
        self.workdir, self.log = workdir, workdir / "server.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([sys.executable, "-c", SERVER, *([str(sources)] if sources else [])],
                                            cwd=workdir, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: "serving" in self.text() or self.process.poll() is not None)
        assert "serving" in self.text(), self.text()

    def text(self) -> str:
        return self.log.read_text()

    def request(self, **changes) -> dict:
        return {"module": STEP, "args": ["--help"], "cwd": str(self.workdir), "env": self.env, **changes}

    def connect(self) -> socket.socket:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(5.0)  # a blocked server fails the test instead of hanging it
        conn.connect(self.path)
        return conn

    def ask(self, message: dict | bytes) -> dict | None:
        """Send a request (a message, or raw bytes) with three descriptors; the first reply. A fork that
        was started ends as soon as its client closes (end_with_client)."""
        streams = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
        try:
            with self.connect() as conn:
                payload = message if isinstance(message, bytes) else warm_protocol.frame(message)
                sent = socket.send_fds(conn, [payload], streams)
                if sent < len(payload):
                    conn.sendall(payload[sent:])
                return warm_protocol.receive(conn, warm_protocol.Inbox())
        finally:
            for fd in streams:
                os.close(fd)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)  # it exits once its socket is gone
        try:
            self.process.wait(5 * warm_protocol.POLL_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@pytest.fixture
def server(tmp_path):
    running = Server(tmp_path)
    yield running
    running.close()


def untouched(path: Path):
    """A check that the file at `path` is the file it is now: kind, bytes, mode, mtime, inode."""
    def identity(info: os.stat_result) -> tuple:
        return info.st_ino, info.st_mode, info.st_mtime_ns

    before, contents = identity(path.lstat()), path.read_bytes()

    def check():
        now = path.lstat()
        assert stat.S_ISREG(now.st_mode) and path.read_bytes() == contents and identity(now) == before
    return check


# ---- 2: the socket's path -------------------------------------------------------------------------

def test_an_ordinary_file_named_as_the_socket_survives_and_the_server_and_its_jobs_refuse_it(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    private = warm_protocol.socket_folder()  # the right folder, but a file where the socket goes
    (private / "socket").write_text("not a socket\n")
    checks = [untouched(notes), untouched(private / "socket")]
    try:
        for path in (notes, private / "socket"):
            env = {**os.environ, warm_protocol.WARM_SOCKET: str(path), warm_protocol.WARM_OWNER: str(os.getpid())}
            env.pop(warm_protocol.OPT_OUT, None)
            served = subprocess.run([sys.executable, "-m", "rlstudy.runtime.warmstart", "--serve"], cwd=tmp_path,
                                    env=env, capture_output=True, text=True, timeout=30)
            assert served.returncode == 0 and "not serving" in served.stdout, served.stdout + served.stderr
            job = subprocess.run([sys.executable, "-m", "rlstudy.runtime.warmstart", STEP, "--help"], cwd=tmp_path,
                                 env=env, capture_output=True, text=True, timeout=60)
            assert job.returncode == 0 and "usage" in job.stdout  # cold, and no server started
            for check in checks:
                check()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "notes.txt"]  # no notes.txt.lock
        assert sorted(p.name for p in private.iterdir()) == ["socket"]
        assert (tmp_path / warm_protocol.SERVER_LOG).read_text().count("ran cold") == 2
    finally:
        shutil.rmtree(private)


def test_only_a_socket_in_a_private_folder_named_by_begin_is_used(tmp_path):
    folder = warm_protocol.socket_folder()
    try:
        good = str(folder / "socket")
        assert warm_protocol.socket_path_refusal(good) is None  # absent: the server makes it
        assert "not rlstudy-warm-" in warm_protocol.socket_path_refusal(str(folder / "notes.txt"))
        assert "not rlstudy-warm-" in warm_protocol.socket_path_refusal(str(tmp_path / "socket"))
        assert "normalised" in warm_protocol.socket_path_refusal("socket")
        assert "normalised" in warm_protocol.socket_path_refusal(f"{folder}/../{folder.name}/socket")
        link = folder.parent / f"rlstudy-warm-{os.getpid() % 10**8:08d}"
        link.symlink_to(folder)
        try:
            assert warm_protocol.socket_path_refusal(str(link / "socket")) == "its folder is not a directory"
        finally:
            link.unlink()
        folder.chmod(0o755)
        assert "mode is 755" in warm_protocol.socket_path_refusal(good)
        folder.chmod(0o700)
        (folder / "socket").symlink_to(tmp_path / "target")
        assert warm_protocol.socket_path_refusal(good) == "it names something other than a socket"
        (folder / "socket").unlink()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(good)
            assert warm_protocol.socket_path_refusal(good) is None
    finally:
        shutil.rmtree(folder)
    assert warm_protocol.socket_path_refusal(good) == warm_protocol.FOLDER_GONE


def test_end_removes_only_the_folder_begin_made(tmp_path, monkeypatch):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    monkeypatch.setattr(warm_client, "_begun", None)
    monkeypatch.setenv(warm_protocol.WARM_SOCKET, str(notes))
    monkeypatch.setenv(warm_protocol.OPT_OUT, "0")  # begin() names nothing: the variable is the user's
    warm_client.begin()
    warm_client.end()
    assert notes.read_text() == "my notes\n"
    monkeypatch.delenv(warm_protocol.OPT_OUT)
    warm_client.begin()
    folder = Path(os.environ[warm_protocol.WARM_SOCKET]).parent
    assert folder.is_dir() and folder.name.startswith("rlstudy-warm-")
    warm_client.end()
    assert not folder.exists() and notes.read_text() == "my notes\n"


# ---- 3: a stalled client ----------------------------------------------------------------------------

def test_a_client_stalled_halfway_through_its_header_blocks_no_other_and_is_dropped_at_the_deadline(server):
    with server.connect() as stalled:
        stalled.sendall(b"\x00\x00")  # half of the length prefix, and then nothing
        started = time.monotonic()
        reply = server.ask(server.request())
        assert isinstance(reply.get("pid"), int), reply
        assert time.monotonic() - started < DEADLINE_S  # served while the stalled one still waits
        dropped = warm_protocol.receive(stalled, warm_protocol.Inbox())
        assert dropped == {"refused": f"no whole request within {DEADLINE_S:g} s"}
        assert time.monotonic() - started < DEADLINE_S + 2 * warm_protocol.POLL_S
        assert stalled.recv(1) == b""  # and closed
    assert server.ask(server.request()).keys() == {"pid"}


# ---- 4: framing, and malformed requests ----------------------------------------------------------

def test_two_messages_in_one_read_are_both_decoded_and_a_split_one_waits_for_its_rest():
    inbox = warm_protocol.Inbox()
    inbox.feed(warm_protocol.frame({"pid": 12}) + warm_protocol.frame({"status": 2}))
    assert inbox.message() == {"pid": 12} and inbox.message() == {"status": 2} and inbox.message() is None
    whole = warm_protocol.frame({"status": 0})
    inbox.feed(whole[:3])
    assert inbox.message() is None
    inbox.feed(whole[3:-1])
    assert inbox.message() is None
    inbox.feed(whole[-1:])
    assert inbox.message() == {"status": 0}


def test_a_client_given_the_pid_and_the_status_in_one_read_returns_the_jobs_own_status():
    """A job that exits at once (make_trajectory --bogus: status 2): its two replies can reach the client in
    one read, which must not be decoded as one message."""
    folder = warm_protocol.socket_folder()
    path = str(folder / "socket")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    received = {}

    def serve_once():
        conn, _ = listener.accept()
        with conn:
            inbox = warm_protocol.Inbox()
            while (request := inbox.message()) is None:
                chunk, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
                inbox.feed(chunk, fds)
            received.update(request)
            inbox.close_fds()
            conn.sendall(warm_protocol.frame({"pid": os.getpid()}) + warm_protocol.frame({"status": 2}))

    thread = threading.Thread(target=serve_once, daemon=True)
    thread.start()
    try:
        assert warm_client.run_warm(path, STEP, ["--bogus"]) == 2
        thread.join(5)
        assert received["module"] == STEP and received["args"] == ["--bogus"]
    finally:
        listener.close()
        shutil.rmtree(folder)


def test_malformed_requests_are_refused_and_the_server_keeps_serving(server):
    request = server.request()
    without_module = {k: v for k, v in request.items() if k != "module"}
    cases = [
        (without_module, "malformed request: no 'module'"),
        ({**request, "module": 3}, "malformed request: 'module' is a int, not a str"),
        ({**request, "args": "--help"}, "malformed request: 'args' is a str, not a list"),
        ({**request, "args": [1]}, "malformed request: 'args' holds a value that is not a string"),
        ({**request, "cwd": None}, "malformed request: 'cwd' is a NoneType, not a str"),
        ({**request, "env": {"HOME": 1}}, "malformed request: 'env' holds a value that is not a string"),
        ({**request, "extra": 1}, "malformed request: unknown key(s) 'extra'"),
        (b"\x00\x00\x00\x05[1,2]", "malformed request: a JSON list, not an object"),
        (b"\x00\x00\x00\x03{{{", "malformed request: not JSON (JSONDecodeError)"),
        (b"\xff\xff\xff\xff",
         f"malformed request: a message of {2**32 - 1} bytes (at most {warm_protocol.MAX_MESSAGE_BYTES})"),
        (warm_protocol.frame(request) + b"\x00", "malformed request: bytes after it"),
    ]
    for message, reason in cases:
        assert server.ask(message) == {"refused": reason}
        assert server.process.poll() is None, server.text()
    streams = [os.open(os.devnull, os.O_RDONLY) for _ in range(4)]
    try:
        with server.connect() as conn:  # three descriptors, then a fourth: refused before the request is whole
            payload = warm_protocol.frame(request)
            socket.send_fds(conn, [payload[:2]], streams[:3])
            socket.send_fds(conn, [payload[2:3]], streams[3:])
            assert warm_protocol.receive(conn, warm_protocol.Inbox()) == {
                "refused": "malformed request: more descriptors than the job's three standard streams"}
    finally:
        for fd in streams:
            os.close(fd)
    assert server.ask(request).keys() == {"pid"}
    assert server.text().count("refused") == len(cases) + 1
    assert "warmstart: refused a request: malformed request: no 'module'" in server.text()


# ---- 5: staleness by content -------------------------------------------------------------------------

def keep_size_and_mtime_edit(path: Path) -> None:
    before = path.stat()
    path.write_bytes(path.read_bytes().replace(b"1", b"2"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -r` would
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_an_edit_that_keeps_size_and_mtime_makes_the_fingerprint_stale(tmp_path, monkeypatch):
    source = tmp_path / "module.py"
    source.write_text("x = 1\n")
    monkeypatch.setattr(warm_preload, "source_files", lambda: [source])
    monkeypatch.setattr(warm_server, "threads", lambda: 1)
    fingerprint = warm_preload.source_fingerprint()
    request = {"module": STEP, "args": [], "cwd": "/work", "env": {}}
    assert warm_server.refusal(request, {}, "/work", fingerprint) is None
    keep_size_and_mtime_edit(source)
    assert warm_server.refusal(request, {}, "/work", fingerprint) == "stale: a source file changed"
    source.unlink()
    assert warm_server.refusal(request, {}, "/work", fingerprint) == "stale: a source file is gone"


def test_a_server_whose_source_was_edited_keeping_size_and_mtime_refuses_and_exits(tmp_path):
    source = tmp_path / "module.py"
    source.write_text("x = 1\n")
    server = Server(tmp_path, sources=source)
    try:
        assert server.ask(server.request()).keys() == {"pid"}
        keep_size_and_mtime_edit(source)
        assert server.ask(server.request()) == {"refused": "stale: a source file changed"}
        server.process.wait(5)
        assert "served 1 job(s); exiting" in server.text()
    finally:
        server.close()


def test_the_cost_of_the_content_fingerprint_is_milliseconds():
    """Every request digests every source by content (a size and mtime per file would miss `touch -r`; a
    file's sha256 is read again whenever its stat moved: core/digests.py): a few milliseconds, against the
    second or more a warm start saves; the bound leaves room for a loaded machine."""
    warm_preload.source_fingerprint()
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        warm_preload.source_fingerprint()
        timings.append(time.perf_counter() - started)
    assert min(timings) < 0.1, timings
