"""The authors' folder is read through regular files of bounded size only: a FIFO, a device, a link out
of the folder, an oversized file or a path too long for the system is refused by name, in one line,
at once (each test fails on a hang: SIGALRM after DEADLINE_S)."""

import os
from pathlib import Path

import pytest

from hostile import cli, deadline, one_line_error  # noqa: F401 (cli is a fixture)
from rlstudy.bellman.data import authors_data, authors_files
from rlstudy.core.errors import InputError

DEADLINE_S = 10
LONG = "/" + "a" * 5000


@pytest.fixture(autouse=True)
def within_deadline():
    """A blocked open() or an endless read raises instead of hanging the suite."""
    with deadline(DEADLINE_S):
        yield


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "authors"
    path.mkdir()
    (path / "control_reference_q.npz").write_bytes(b"some bytes")
    return path


def one_line(err: pytest.ExceptionInfo, *fragments: str) -> None:
    message = str(err.value)
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_a_fifo_is_refused_by_name_without_being_opened(folder):
    os.mkfifo(folder / "x.pt")
    with pytest.raises(InputError) as err:
        authors_files.source_files(folder)
    one_line(err, "x.pt: a FIFO, not a regular file")


def test_a_link_to_dev_zero_is_refused_by_name(folder):
    (folder / "evil.npz").symlink_to("/dev/zero")
    with pytest.raises(InputError) as err:
        authors_files.source_files(folder)
    one_line(err, "evil.npz: a link out of the folder (to /dev/zero)")


def test_a_link_out_of_the_folder_is_refused_even_to_a_regular_file(folder, tmp_path):
    outside = tmp_path / "elsewhere.npz"
    outside.write_bytes(b"fine bytes, wrong place")
    (folder / "S_1.pt").symlink_to(outside)
    with pytest.raises(InputError) as err:
        authors_files.read_bytes(folder / "S_1.pt")
    one_line(err, "S_1.pt: a link out of the folder")


def test_a_link_inside_the_folder_is_read_and_one_to_a_fifo_there_is_refused(folder):
    (folder / "alias.npz").symlink_to("control_reference_q.npz")
    assert authors_files.read_bytes(folder / "alias.npz") == b"some bytes"
    os.mkfifo(folder / "pipe")
    (folder / "R_1.pt").symlink_to("pipe")
    with pytest.raises(InputError) as err:
        authors_files.source_files(folder)
    one_line(err, "R_1.pt: a FIFO, not a regular file")


def test_a_link_loop_or_a_dangling_link_is_refused(folder):
    (folder / "a.pt").symlink_to("b.pt")
    (folder / "b.pt").symlink_to("a.pt")
    with pytest.raises(InputError) as err:
        authors_files.source_files(folder)
    one_line(err, "a.pt: a link that leads nowhere readable")
    (folder / "a.pt").unlink()
    (folder / "b.pt").unlink()
    (folder / "c.pt").symlink_to("missing.pt")
    with pytest.raises(InputError, match="c.pt: a link that leads nowhere readable"):
        authors_files.source_files(folder)


def test_a_file_over_the_limit_is_refused_and_the_limit_holds_the_biggest_authors_file(folder, monkeypatch):
    """The limit has room: the pinned NumPy copy's biggest file is about 7 MB."""
    assert authors_files.MAX_FILE_BYTES >= 8 * 7_037_990
    monkeypatch.setattr(authors_files, "MAX_FILE_BYTES", 5)
    with pytest.raises(InputError) as err:
        authors_files.source_files(folder)
    one_line(err, "control_reference_q.npz: 10 bytes, over the 5 any of the authors' files may have")


def test_a_path_too_long_for_the_system_is_one_cut_line():
    with pytest.raises(InputError) as err:
        authors_files.source_files(LONG)
    one_line(err, "File name too long", "(5,001 characters)")
    assert len(str(err.value)) < 300


def test_only_pt_and_npz_files_are_listed_and_other_entries_are_not_opened(folder):
    os.mkfifo(folder / "README.md")  # not one of the authors' suffixes: never looked into
    (folder / "S_1.pt").write_bytes(b"x")
    assert authors_files.source_files(folder) == [folder / "S_1.pt", folder / "control_reference_q.npz"]


def test_a_file_swapped_for_a_fifo_after_the_check_is_refused_on_the_open_descriptor(folder, monkeypatch):
    """checked_path looked at a regular file; by the open it is a FIFO with no writer. Opened
    without O_NONBLOCK this blocks for ever."""
    fifo = folder / "S_2.pt"
    os.mkfifo(fifo)
    monkeypatch.setattr(authors_files, "checked_path", lambda path: Path(path))
    with pytest.raises(InputError) as err:
        authors_files.read_bytes(fifo)
    one_line(err, "S_2.pt: a FIFO, not a regular file")


def test_the_loaders_refuse_a_fifo_named_as_an_authors_file(folder):
    os.mkfifo(folder / authors_data.NPZ_OF_TASK["control"])
    with pytest.raises(InputError, match="control_trajectory_1e6.npz: a FIFO"):
        authors_data.trajectory_from_npz(folder / authors_data.NPZ_OF_TASK["control"])
    (folder / "Q_ctrl_star.pt").symlink_to("/dev/zero")
    with pytest.raises(InputError, match="Q_ctrl_star.pt: a link out of the folder"):
        authors_data.reference_from_pickled_module(folder / "Q_ctrl_star.pt", check_hash=False)


@pytest.mark.parametrize("hazard", ["fifo", "dev-zero", "long"])
def test_the_import_step_refuses_in_one_line(cli, folder, hazard):
    """Through the step's own main(): a FIFO or a device named as one of the originals is refused,
    not passed over for the NumPy copy, and a 5000-character source is one line, not a traceback."""
    source = str(folder)
    if hazard == "fifo":
        os.mkfifo(folder / "S_2.pt")
        expected = "S_2.pt: a FIFO"
    elif hazard == "dev-zero":
        (folder / "S_2.pt").symlink_to("/dev/zero")
        expected = "S_2.pt: a link out of the folder"
    else:
        source, expected = LONG, "File name too long"
    status, stderr = cli("bellman.cli.import_authors_data", "--task", "control", "--source", source, "--steps", "0",
                         "--trajectory-out", folder / "out")
    one_line_error(status, stderr, "config 'authors_data'", expected)
    assert not (folder / "out").exists()
