"""core/digests.py: a file's sha256 is reused only while its stat stays (an edit that keeps size and mtime
moves ctime, and is read again), never for a file changed within the last second, and rows handed over
from another process are taken only whole and well formed."""

import hashlib
import os

import pytest

from rlstudy.core import digests


@pytest.fixture
def reads(monkeypatch):
    """An empty memory, and the paths read since (each read of a file's bytes)."""
    monkeypatch.setattr(digests, "_remembered", {})
    monkeypatch.setattr(digests, "_learned", {})
    seen = []
    read = digests._read_sha256

    def counted(path):
        seen.append(str(path))
        return read(path)

    monkeypatch.setattr(digests, "_read_sha256", counted)
    return seen


def settled(monkeypatch):
    """As if every file had been written long ago (a ctime cannot be set back)."""
    monkeypatch.setattr(digests, "SETTLED_NS", -10**18)


def test_a_settled_file_is_read_once_while_its_stat_stays(tmp_path, reads, monkeypatch):
    settled(monkeypatch)
    path = tmp_path / "states.npy"
    path.write_bytes(b"1" * 5000)
    assert digests.sha256_file(path) == digests.sha256_file(str(path)) == hashlib.sha256(b"1" * 5000).hexdigest()
    assert reads == [str(path)]
    assert [row[-1] for row in digests.take_learned()] == [hashlib.sha256(b"1" * 5000).hexdigest()]
    assert digests.take_learned() == []  # handed over once


def test_an_edit_that_keeps_size_and_mtime_is_read_again(tmp_path, reads, monkeypatch):
    settled(monkeypatch)
    path = tmp_path / "states.npy"
    path.write_bytes(b"1" * 5000)
    first = digests.sha256_file(path)
    before = path.stat()
    path.write_bytes(b"2" * 5000)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -r` would
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert digests.sha256_file(path) == hashlib.sha256(b"2" * 5000).hexdigest() != first
    assert len(reads) == 2


def test_a_file_changed_within_the_last_second_is_not_remembered(tmp_path, reads):
    path = tmp_path / "fresh.csv"
    path.write_text("a\n1\n")
    digests.sha256_file(path)
    digests.sha256_file(path)
    assert len(reads) == 2 and digests.take_learned() == []


def test_rows_from_another_process_are_taken_whole_or_not_at_all(reads):
    digest = hashlib.sha256(b"x").hexdigest()
    assert digests.remember([[1, 2, 3, 4, 5, digest], [1, 2, 3, 4, 6, digest]]) == 2
    assert digests.remember([[1, 2, 3, 4, 5, digest]]) == 0  # known already
    for rows in ({"a": 1}, [[1, 2, 3, 4, digest]], [[1, 2, 3, 4, True, digest]], [[1, 2, 3, 4, -5, digest]],
                 [[1, 2, 3, 4, 7, digest], [1, 2, 3, 4, 8, digest.upper()]], [[1, 2, 3, 4, 9, "../x"]]):
        with pytest.raises(ValueError):
            digests.remember(rows)
    assert len(digests._remembered) == 2


def test_a_file_known_from_another_process_is_not_read(tmp_path, reads):
    path = tmp_path / "q.pt"
    path.write_bytes(b"weights")
    info = path.stat()
    digests.remember([[info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, "a" * 64]])
    assert digests.sha256_file(path) == "a" * 64 and reads == []
