"""A run's error curve (errors.csv, written by run_method) as the tables and figures read it.

A curve is refused by name unless it is one complete run: its key columns constant, iterations
0, 1, ..., n in order, finite errors and evaluation counts. Curves read together must be distinct
runs, and the seeds of one dataset, task, setting and estimator equally long, so a cut or copied
file cannot pass as a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv, refuse_repeated_runs

RUN_KEYS = ["dataset", "task", "setting", "estimator", "seed"]


def load_error_curve(path: str | Path, what: str = "error curve", columns: Sequence[str] = ()) -> pd.DataFrame:
    """The curve of one run, with the given further columns."""
    curve = load_csv(path, what, columns=[*RUN_KEYS, "iteration", *columns],
                     finite=["evaluations", "error", "rel_error", "error_exact", "rel_error_exact"])
    if not np.array_equal(curve["iteration"].to_numpy(), np.arange(len(curve))):
        raise InputError(f"{path} ({what}): iterations are not 0, 1, ..., {len(curve) - 1} in order; "
                         "a damaged or cut file, rerun its rule")
    if len(curve[RUN_KEYS].drop_duplicates()) != 1:
        raise InputError(f"{path} ({what}): holds more than one run (columns {RUN_KEYS} vary); one run per file")
    return curve


def load_error_curves(paths: Sequence[str | Path]) -> list[pd.DataFrame]:
    """The curves of distinct runs; the seeds of one dataset, task, setting and estimator must have run
    equally long (run_method fails on divergence, so a shorter one is a cut file)."""
    curves = [load_error_curve(path) for path in paths]
    refuse_repeated_runs([(path, dict(zip(RUN_KEYS, curve[RUN_KEYS].iloc[0]))) for path, curve in zip(paths, curves)])
    lengths = {}
    for path, curve in zip(paths, curves):
        group = tuple(curve[RUN_KEYS].iloc[0])[:-1]
        if group in lengths and lengths[group][1] != len(curve):
            other, n = lengths[group]
            raise InputError(f"{path}: {len(curve) - 1} iterations, but {other} of the same setting has {n - 1}; "
                             "a cut file? rerun its rule")
        lengths.setdefault(group, (path, len(curve)))
    return curves


def load_wall_time(path: str | Path, curve: pd.DataFrame) -> np.ndarray:
    """The seconds column of a run's wall_time.csv, row for row with its error curve."""
    times = load_csv(path, "wall time", columns=["iteration"], finite=["seconds"])
    if not np.array_equal(times["iteration"].to_numpy(), curve["iteration"].to_numpy()):
        raise InputError(f"{path} (wall time): its iterations are not those of the run's errors.csv; rerun its rule")
    return times["seconds"].to_numpy()
