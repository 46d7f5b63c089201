"""What a warm job hands back to its server: the sha256 of the files it hashed (core/digests.py), so that
the jobs forked after it read none of them again. Each fork gets a pipe of its own; it writes one JSON
list as it ends, which the server remembers once the pipe closes. The server only takes the rows
digests.remember accepts; a job that hashed nothing new writes nothing."""

from __future__ import annotations

import json
import os
import selectors

from rlstudy.core import digests

from .protocol import MAX_MESSAGE_BYTES


def send_report(pipe: int) -> None:
    """In the fork, as the job ends. The server reads its pipes in every round of its poll, so a report
    bigger than the pipe holds waits a moment at most; a server that is gone (EPIPE) takes none."""
    try:
        rows = digests.take_learned()
        data = json.dumps(rows).encode()
        if rows and len(data) <= MAX_MESSAGE_BYTES:
            with open(pipe, "wb", closefd=False) as stream:
                stream.write(data)
    except OSError:
        pass
    finally:
        os.close(pipe)


class Reports:
    """The server's side: a pipe per running job, read as its bytes come, in the server's poll."""

    def __init__(self, selector: selectors.BaseSelector) -> None:
        self.selector = selector
        self.received: dict[int, bytearray] = {}

    def started(self, ours: int, theirs: int) -> None:
        """In the server, once a job is forked with its end of a new pipe (os.pipe(): ours, theirs)."""
        os.close(theirs)
        os.set_blocking(ours, False)
        self.received[ours] = bytearray()
        self.selector.register(ours, selectors.EVENT_READ)

    def in_fork(self, ours: int) -> None:
        """In the new fork: close the server's ends, of its own pipe and of every other job's."""
        for fd in [ours, *self.received]:
            os.close(fd)

    def read(self, fd: int) -> None:
        """Bytes from a job's pipe; once it closes, its rows are remembered. A report that is not one is
        dropped, said in the server's log."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk and len(self.received[fd]) + len(chunk) <= MAX_MESSAGE_BYTES:
            self.received[fd] += chunk
            return
        data = None if chunk else bytes(self.received[fd])
        self.close(fd)
        if not data:  # too long, or nothing: a job that ended before it reported
            return
        try:
            digests.remember(json.loads(data))
        except (ValueError, RecursionError) as error:
            print(f"warmstart: a job's report of the files it hashed is not one: {str(error)[:200]}", flush=True)

    def close(self, fd: int) -> None:
        self.selector.unregister(fd)
        del self.received[fd]
        os.close(fd)

    def close_all(self) -> None:
        for fd in list(self.received):
            self.close(fd)
