"""Whether a result table is from the paper-scale profile, the one way the project tells scales:
every run it summarises (followed through the provenance records' inputs) must have been made with
the parameters this checkout's config.yaml gives; the smoke profile's scale.yaml changes the budgets
of every run. render_readme refuses other tables for the tracked pages and states the scale on the
claims page (`scale_line`); compare_verdicts reads it back (`stated_scale`) and refuses to compare
verdicts of two scales."""

from __future__ import annotations

import re
from pathlib import Path

from rlstudy.bellman.learners.sweep import resolve_sweep, sweep_points
from rlstudy.core.config import ConfigError, load_yaml
from rlstudy.core.provenance import read_record
from rlstudy.core.markdown import text
from rlstudy.core.scale import PAPER

OTHER = "not the paper's"
_STATED = re.compile(rf"^Scale: ({re.escape(PAPER)}|{re.escape(OTHER)})\b", re.MULTILINE)


def _records_of_runs(table: str, depth: int = 2, run_file: str = "errors.csv") -> list[tuple[str, dict]]:
    """(path, record) of every run file (by default the error curves) a table was computed from,
    following the inputs of each record down to the runs (claims.csv -> summary.csv -> errors.csv)."""
    found = []
    record = read_record(table, "a result table") or {}
    inputs = record.get("inputs") if isinstance(record.get("inputs"), dict) else {}
    for entry in inputs.values():
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str):
            continue
        if path.endswith(run_file):
            found.append((path, read_record(path, "a run's output") or {}))
        elif depth > 1 and path.endswith(".csv"):
            found += _records_of_runs(path, depth - 1, run_file)
    return found


def scale_problem(table: str, config_path: str = "config.yaml", study=None) -> str | None:
    """Why `table` is not from the paper-scale profile, or None: every run it summarises must have
    been made with the parameters config.yaml gives (the smoke profile's scale.yaml changes the
    budgets of every run), and there must be such runs. `study`: a StudyTable, whose runs it checks
    with its own rule; the CBO/BFF study's error curves otherwise."""
    try:
        config = load_yaml(config_path, "config file")
    except ConfigError as err:
        return str(err)
    runs = _records_of_runs(table, run_file=study.run_file if study else "errors.csv")
    if not runs:
        return "its provenance record names no run it was computed from"
    for path, record in runs:
        parameters = record.get("parameters") if isinstance(record.get("parameters"), dict) else {}
        try:
            wanted, made = study.scale_of(path, parameters, config) if study else _bellman_scale(path, parameters, config)
        except (KeyError, TypeError, AttributeError):
            return f"run {path} is not one {config_path} makes"
        for key, value in wanted.items():
            if made.get(key) != value:
                return f"run {path} was made with {key} {made.get(key)!r}, {config_path} gives {value!r}"
    return None


def _bellman_scale(path: str, parameters: dict, config: dict) -> tuple[dict, dict]:
    """(what config.yaml asks of an error curve's run, what its record says was used). A sweep run
    (setting cbo-sweep, in results/sweep/<grid>/<label>/seed<n>/) is asked for its point's parameters."""
    task, setting = parameters["task"], parameters["setting"]
    if setting == "cbo-sweep":
        grid, label = Path(path).parts[-4:-2]
        points = {(point.grid, point.label): point for point in sweep_points(resolve_sweep(config))}
        return points[grid, label].params, parameters["params"]
    wanted = config["sgd"][task] if setting == "sgd" else config["cbo"]["settings"][setting]["params"]
    return wanted, parameters["params"]


def scale_line(problem: str | None) -> str:
    """The claims page's statement of its scale, from scale_problem of the table it shows."""
    if problem is None:
        return (f"Scale: {PAPER} (every run these verdicts were computed from was made with the parameters of "
                "`config.yaml`).")
    return f"Scale: {OTHER} ({text(problem)}): a preview, not to be published."


def stated_scale(page: str) -> str | None:
    """PAPER or OTHER, as a page's generated block states it (scale_line); None when it states none."""
    found = _STATED.search(page)
    return found.group(1) if found else None
