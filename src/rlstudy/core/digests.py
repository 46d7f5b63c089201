"""The sha256 of a file, remembered in this process's memory by what `os.stat` says of the file.

A job hashes each input twice (its load checks it against its record, its own record lists it), and
at paper scale the short trajectory is 17 MB; the warm-start server's forks (runtime/warmstart/) hand
what they hashed back to the server, so the jobs after them hash none of their inputs again; the
server's check of its own sources reads the same memory. Never on disk, where it could go stale.

A digest is reused only for the same file with the same stat: device, inode, size, and the times of
its last write (mtime) and last change (ctime). Any write moves ctime, and ctime cannot be set back
(`touch -r` sets mtime, and moves ctime), so a file whose contents changed is read again. A file
changed less than SETTLED_NS before it is read is not remembered: a second write within the same
tick of the file system's clock would leave all five as they were."""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time

SETTLED_NS = 1_000_000_000
MAX_REMEMBERED = 100_000  # files; a workflow run reads a few thousand
SHA256_HEX = re.compile(r"[0-9a-f]{64}")

Key = tuple[int, int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns

_remembered: dict[Key, str] = {}
_learned: dict[Key, str] = {}  # remembered since the last take_learned()


def _key(info: os.stat_result) -> Key:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _read_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    """The file's sha256: remembered where its stat is the one it had when it was last read here."""
    before = os.stat(path)
    if not stat.S_ISREG(before.st_mode):
        return _read_sha256(path)
    key = _key(before)
    if key in _remembered:
        return _remembered[key]
    started = time.time_ns()
    digest = _read_sha256(path)
    settled = started - max(before.st_mtime_ns, before.st_ctime_ns) > SETTLED_NS
    if settled and _key(os.stat(path)) == key and len(_remembered) < MAX_REMEMBERED:
        _remembered[key] = _learned[key] = digest
    return digest


def take_learned() -> list[list]:
    """What was remembered since the last call, as JSON-ready rows [dev, inode, size, mtime_ns,
    ctime_ns, sha256]; forgets that it was new."""
    rows = [[*key, digest] for key, digest in _learned.items()]
    _learned.clear()
    return rows


def remember(rows: object) -> int:
    """Take rows of take_learned() from another process (a fork of this one); how many were new.
    ValueError where they are not such rows: none is taken then."""
    if not isinstance(rows, list):
        raise ValueError(f"digests: a {type(rows).__name__}, not a list")
    taken = {}
    for row in rows:
        if not (isinstance(row, list) and len(row) == 6
                and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in row[:5])
                and isinstance(row[5], str) and SHA256_HEX.fullmatch(row[5])):
            raise ValueError(f"digests: not a row [dev, inode, size, mtime_ns, ctime_ns, sha256]: {str(row)[:80]}")
        taken[tuple(row[:5])] = row[5]
    new = {key: digest for key, digest in taken.items() if key not in _remembered}
    room = max(0, MAX_REMEMBERED - len(_remembered))
    _remembered.update(dict(list(new.items())[:room]))
    return min(len(new), room)
