"""The warm-start server's and its clients' common ground: the environment variables that name the
socket and its owner, where the socket may be (a folder named, made and owned as begin() makes it),
and the wire (a length-prefixed JSON message, the job's standard streams passed along with it)."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import struct
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


def comparable(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in SHELL_OWN}



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
