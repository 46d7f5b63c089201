"""Files read back from outside the step that wrote them, opened only as regular files of bounded size.

A folder the project reads (the authors' data, the published headline figures, a run's tables and
records, a manifest) may hold anything: a FIFO would block an open for ever, a link to /dev/zero would
be read for ever. Each file is opened without following a link and without blocking (O_NOFOLLOW |
O_NONBLOCK), checked on the open descriptor (a regular file, at most `limit` bytes) and read at most
`limit` + 1 bytes; anything else is one line (InputError) naming the file.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path

from rlstudy.core.errors import InputError

SHOWN_CHARACTERS = 120  # of a path in a message: a 5000-character path is cut, not printed whole
# A record lists a few hundred inputs at most (a few hundred KB): a bigger file is not one of ours.
MAX_RECORD_BYTES = 8 << 20


def shown(path: str | Path) -> str:
    """A path as an error message names it: on one line (control characters escaped), cut when long."""
    text = str(path)
    if not text.isprintable():
        text = ascii(text)[1:-1]
    if len(text) > SHOWN_CHARACTERS:
        text = f"{text[:SHOWN_CHARACTERS // 2]}...{text[-SHOWN_CHARACTERS // 2:]} ({len(str(path)):,} characters)"
    return text


def kind_of_mode(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISLNK, "a link")):
        if test(mode):
            return name
    return "not a regular file"


def refuse_unless_small_regular(path: str | Path, info: os.stat_result, limit: int, what: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{shown(path)}: {kind_of_mode(info.st_mode)}, not a regular file ({what}: only regular "
                         "files are opened)")
    if info.st_size > limit:
        raise InputError(f"{shown(path)}: {info.st_size:,} bytes, over the {limit:,} {what} may have")


def read_regular(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of path, a regular file (not a link, FIFO or device) of at most `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        if err.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise InputError(f"{shown(path)}: a link, not a regular file ({what}: links are not followed)") from err
        raise InputError(f"cannot read {shown(path)} ({what}): {err.strerror or err}") from err
    with os.fdopen(fd, "rb") as file:
        refuse_unless_small_regular(path, os.fstat(fd), limit, what)
        data = file.read(limit + 1)
    if len(data) > limit:  # grown since the check
        raise InputError(f"{shown(path)}: over the {limit:,} bytes {what} may have")
    return data


def sha256_regular(path: str | Path, limit: int, what: str) -> str:
    return hashlib.sha256(read_regular(path, limit, what)).hexdigest()


def read_json(path: str | Path, limit: int, what: str):
    """JSON from a regular file of at most `limit` bytes; one line naming the file when it is not JSON."""
    data = read_regular(path, limit, what)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as err:
        raise InputError(f"{shown(path)} ({what}): not JSON ({str(err).splitlines()[0]})") from err
