"""core.atomic_writes.replace_all: several files written all or none (render_readme's pages); and the temporary file it
makes as write_artefact does."""

import errno
import os

import pytest

from rlstudy.core.errors import OutputError
from rlstudy.core.atomic_writes import replace_all, write_artefact


def test_every_file_is_written_or_none_and_a_new_one_is_removed_again(tmp_path, monkeypatch):
    old, new, last = tmp_path / "old.md", tmp_path / "sub" / "new.md", tmp_path / "last.md"
    old.write_bytes(b"old")
    last.write_bytes(b"last")
    (tmp_path / "sub").mkdir()
    real, calls = os.replace, []

    def replace(source, target):
        calls.append(target)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(source, target)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", replace)
        with pytest.raises(OutputError, match=f"cannot write {last}: .*; no file was changed"):
            replace_all({old: b"A", new: b"B", last: b"C"})
    assert old.read_bytes() == b"old" and not new.exists() and last.read_bytes() == b"last"
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["last.md", "old.md", "sub"]  # no temporary left
    replace_all({old: b"A", new: b"B", last: b"C"})
    assert (old.read_bytes(), new.read_bytes(), last.read_bytes()) == (b"A", b"B", b"C")


def test_a_folder_given_as_a_file_is_refused_before_anything_is_written(tmp_path):
    page = tmp_path / "page.md"
    page.write_bytes(b"page")
    with pytest.raises(OutputError, match="it is a folder"):
        replace_all({page: b"new", tmp_path: b"x"})
    assert page.read_bytes() == b"page"


def test_a_file_that_could_not_be_put_back_is_named(tmp_path, monkeypatch):
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    first.write_bytes(b"1")
    second.write_bytes(b"2")
    real, calls = os.replace, []

    def replace(source, target):  # the disk fails after the first rename, for the restore too
        calls.append(target)
        if len(calls) > 1:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(source, target)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OutputError, match=f"cannot write {second}: .*; and could not put back {first}$"):
        replace_all({first: b"A", second: b"B"})


WRITERS = {"write_artefact": lambda path: write_artefact(path, b"new", None),
           "replace_all": lambda path: replace_all({path: b"new"})}


@pytest.mark.parametrize("writer", WRITERS)
def test_a_temporary_file_that_cannot_be_finished_is_removed_and_the_file_kept(tmp_path, monkeypatch, writer):
    """Both writers make their temporary file one way (core.atomic_writes._temporary_beside): one whose
    permissions cannot be set is removed again, and the file it was for keeps its bytes."""
    page = tmp_path / "page.md"
    page.write_bytes(b"old")

    def chmod(*_):
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "chmod", chmod)
    with pytest.raises(OutputError, match=f"cannot write {page}: {os.strerror(errno.EPERM)}"):
        WRITERS[writer](page)
    assert page.read_bytes() == b"old" and [path.name for path in tmp_path.iterdir()] == ["page.md"]


@pytest.mark.parametrize("writer", WRITERS)
def test_both_writers_give_the_users_umask(tmp_path, writer):
    previous = os.umask(0o027)
    try:
        WRITERS[writer](tmp_path / "page.md")
    finally:
        os.umask(previous)
    assert (tmp_path / "page.md").stat().st_mode & 0o777 == 0o640
