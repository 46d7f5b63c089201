"""Loads that fail with the file's name: a missing, damaged or non-finite input raises InputError naming
the file and the rule to rerun; a file whose provenance record gives another sha256 is refused
(core/provenance.py). Every file read is recorded: the inputs of a figure's provenance."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .errors import InputError, first_line
from .provenance import check_against_record

if TYPE_CHECKING:  # each imported where a table or a tensor is read: the Snakefile's checks read neither
    import pandas as pd  # (pandas: a quarter of a second of every Snakemake start)
    import torch  # most steps never touch a tensor (start-up time)


# Every file this process has read through the loaders below: the inputs of a figure's provenance.
_INPUTS_READ: dict[str, Path] = {}


def inputs_read() -> dict[str, Path]:
    return dict(_INPUTS_READ)


def refuse_repeated_runs(runs: list[tuple[str | Path, dict]]) -> None:
    """Runs read together must be distinct: (path, the keys naming its run) for each."""
    seen = {}
    for path, key in runs:
        frozen = tuple(sorted((k, str(v)) for k, v in key.items()))
        if frozen in seen:
            raise InputError(f"{path} and {seen[frozen]} hold the same run {key}")
        seen[frozen] = path


def _load(path, what: str, read):
    """read(path) for an input that exists and matches its record; a failure names the file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"missing input file {path} ({what}); build it with: snakemake --cores all {path}")
    _INPUTS_READ[str(path)] = path
    check_against_record(path, what)
    try:
        return read(path)
    except Exception as err:  # each reader raises its own types for a damaged file (torch: many)
        if isinstance(err, OSError) and err.errno is not None:  # the system's (permission, I/O), not the content's
            raise InputError(f"cannot read {path} ({what}): {err.strerror}") from err
        raise InputError(f"corrupt input file {path} ({what}): {first_line(err)}; "
                         "delete it and rerun its rule") from err


def load_npy(path, what: str) -> np.ndarray:
    return _load(path, what, lambda p: np.load(p, allow_pickle=False))


def require_finite(tensors: dict[str, torch.Tensor], where: str | Path) -> None:
    """Refuse NaN or inf in any floating tensor of a state dict (a diverged or damaged network)."""
    import torch

    for name, tensor in tensors.items():
        if torch.is_floating_point(tensor) and not torch.isfinite(tensor).all():
            raise InputError(f"{where}: '{name}' holds NaN or inf (a diverged or damaged network); "
                             "rerun the rule that writes it")


def load_tensors(path, what: str) -> dict[str, torch.Tensor]:
    """A dict of tensors (weights_only: no code from the file runs), every floating tensor finite."""
    import torch

    tensors = _load(path, what, lambda p: torch.load(p, weights_only=True))
    if not isinstance(tensors, dict) or not all(isinstance(t, torch.Tensor) for t in tensors.values()):
        raise InputError(f"{path} ({what}): expected a dict of tensors, got {type(tensors).__name__}")
    require_finite(tensors, f"{path} ({what})")
    return tensors


def load_csv(path, what: str, columns=(), finite=()) -> pd.DataFrame:
    """A table with at least one row and the given columns, the `finite` ones free of NaN and inf."""
    import pandas as pd

    frame = _load(path, what, pd.read_csv)
    missing = [c for c in (*columns, *finite) if c not in frame.columns]
    if missing or frame.empty:
        raise InputError(f"{path} ({what}): " + (f"no column {missing}" if missing else "no rows")
                         + "; rerun its rule")
    for column in finite:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(values).all():
            row = int(np.flatnonzero(~np.isfinite(values))[0])
            raise InputError(f"{path} ({what}): column '{column}' is not a finite number in row {row} "
                             f"({frame[column].iloc[row]!r}); a diverged run or a damaged file")
    return frame
