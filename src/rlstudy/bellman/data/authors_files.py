"""The files of an `authors_data` folder, read only as regular files of bounded size.

The folder is the user's (a mount, a colleague's copy): whatever it holds is listed by the Snakefile
while it starts and read by the import step. A FIFO named `x.pt` would block every open, a link
`evil.npz -> /dev/zero` would be read for ever, and a path too long for the system raises
ENAMETOOLONG; each is refused here by name in one line (InputError) instead, without opening it:
only regular files inside the folder (a link may point to another file of the folder, not out of
it) and no bigger than MAX_FILE_BYTES. A file is then opened without following a link and without
blocking (O_NOFOLLOW | O_NONBLOCK) and checked again on the open descriptor, so a file swapped for a
FIFO after the check is refused too rather than waited on.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from rlstudy.core.errors import InputError
from rlstudy.core.regular_files import read_regular, refuse_unless_small_regular, shown

# The authors' files are pinned by sha256 (authors_data.SHA256): the NumPy copy's biggest is 7.0 MB
# (control_trajectory_1e6.npz), the originals hold 1e6 values a tensor (at most 8 bytes each, 8 MB).
# Eight times that leaves room for any serialisation of them and stops a runaway read within a second.
MAX_FILE_BYTES = 64 << 20
SUFFIXES = (".pt", ".npz")  # what the folder's files may be: the originals and the NumPy conversion
WHAT = "any of the authors' files"


def _stat(path: Path, follow: bool) -> os.stat_result:
    try:
        return os.stat(path, follow_symlinks=follow)
    except OSError as err:
        raise InputError(f"cannot read {shown(path)} (the authors' data): {err.strerror or err}") from err


def folder_of(source: str | Path) -> Path:
    """The authors' folder, resolved (a folder that is itself a link is fine), or a refusal naming it."""
    path = Path(source)
    if not stat.S_ISDIR(_stat(path, follow=True).st_mode):
        raise InputError(f"{shown(path)} is not a folder (give 'none', 'download', or a folder with the "
                         "authors' original .pt files or their NumPy conversion)")
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError) as err:  # RuntimeError: a loop of links (before Python 3.13)
        raise InputError(f"cannot read {shown(path)} (the authors' data): {getattr(err, 'strerror', None) or err}") \
            from err


def _refuse_unless_small_regular(path: Path, info: os.stat_result) -> None:
    refuse_unless_small_regular(path, info, MAX_FILE_BYTES, WHAT)


def checked_path(path: str | Path) -> Path:
    """The file to open for path, a file of its folder: path itself, or where a link inside the
    folder points; refused (InputError, naming path) unless it is a regular file of at most
    MAX_FILE_BYTES and, through a link, one inside the same folder. Nothing is opened."""
    path = Path(path)
    info = _stat(path, follow=False)
    target = path
    if stat.S_ISLNK(info.st_mode):
        folder = folder_of(path.parent)
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError) as err:
            raise InputError(f"{shown(path)}: a link that leads nowhere readable "
                             f"({getattr(err, 'strerror', None) or err})") from err
        if not target.is_relative_to(folder):
            raise InputError(f"{shown(path)}: a link out of the folder (to {shown(target)}); copy the file "
                             "into the folder instead")
        info = _stat(target, follow=False)
    _refuse_unless_small_regular(path, info)
    return target


def source_files(source: str | Path) -> list[Path]:
    """Every .pt and .npz file of the folder source, sorted, each checked (checked_path)."""
    folder = Path(source)
    folder_of(folder)
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if Path(entry.name).suffix in SUFFIXES)
    except OSError as err:
        raise InputError(f"cannot list {shown(folder)} (the authors' data): {err.strerror or err}") from err
    for name in names:
        checked_path(folder / name)
    return [folder / name for name in names]


def read_bytes(path: str | Path) -> bytes:
    """The contents of path, a file as checked_path accepts, read through a descriptor that was
    opened without blocking and without following a link, and checked again before reading."""
    return read_regular(checked_path(path), MAX_FILE_BYTES, WHAT)


def sha256(path: str | Path) -> str:
    return hashlib.sha256(read_bytes(path)).hexdigest()
