"""What the warm-start server loads before it forks any job (every study's steps and warm-up hook,
found by their files, and what every job's provenance records of the checkout and the libraries), and
what makes it stale (the sha256 of the package's sources and the config schema): a server whose files
changed exits, and its jobs run cold."""

from __future__ import annotations

import hashlib
import importlib
import os
from pathlib import Path

from rlstudy.core.digests import sha256_file


PACKAGE = Path(__file__).resolve().parents[2]  # src/rlstudy
WARM_UP_MODULE = "warmup"  # rlstudy/<study>/warmup.py: its warm_up() readies more than the study's steps
STEPS_PACKAGE = "cli"  # rlstudy/<study>/cli/: the study's steps, every rule's MODULE


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
    """Ready every study (warmed_studies, warm_up), read the config schema, and look up what a record
    says of the checkout and the libraries (core/provenance.py: once per process)."""
    import matplotlib

    matplotlib.use("Agg")  # the figure steps' backend (plotting/style.py), before any step imports pyplot
    for study, steps, hook in warmed_studies():
        warm_up(study, steps, hook)
    from rlstudy.core import config, provenance

    config.schema()
    provenance.git_commit()
    provenance.package_versions()


def source_files() -> list[Path]:
    """Every source file of the package (the hooks and all they import from it), and the config schema
    that preload read."""
    from rlstudy.core.config import schema_file

    return [*sorted(PACKAGE.rglob("*.py")), schema_file()]


def source_fingerprint() -> str:
    """The sha256 of those files' names and contents: a server whose files changed is stale. By content,
    not size and mtime, which an edit can keep (`touch -r`): each file's sha256, read again whenever its
    stat moved (core/digests.py), so that a request costs a stat per file, not a read."""
    digest = hashlib.sha256()
    for path in source_files():
        digest.update(os.fsencode(path) + b"\0" + bytes.fromhex(sha256_file(path)))
    return digest.hexdigest()



def threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1  # not Linux: unknown, so never forked
