"""The CBO parameter sweep: grids of two parameters each, every other parameter at the base setting.

config `cbo_sweep.grids` maps a grid's name to {parameter: [values], parameter: [values]}, and
optionally `with: {parameter: value}` to move the grid's fixed point away from the base; every
pair of values is one sweep point, one CBO run per seed. The workflow (to name the runs) and the table
(to label them) both enumerate the points here, so the two cannot disagree.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from rlstudy.core.config import subschema_validator


def format_value(value) -> str:
    """A value as it appears in file names and figure labels: 1000, 0.01, reward_level."""
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class SweepPoint:
    grid: str
    x: str  # the grid's first parameter (heatmap columns)
    x_value: object
    y: str  # its second parameter (heatmap rows)
    y_value: object
    params: dict  # the full CBO parameters of the run

    @property
    def label(self) -> str:
        return f"{self.x}={format_value(self.x_value)},{self.y}={format_value(self.y_value)}"


def sweep_points(sweep: dict) -> list[SweepPoint]:
    """Every point of every grid. A grid that changes `particles` without `particle_batch` keeps
    particle_batch = particles (one epoch is one step over the whole swarm, as at the base)."""
    points = []
    for grid, spec in sweep["grids"].items():
        axes = {name: values for name, values in spec.items() if name != "with"}
        if len(axes) != 2:
            raise ValueError(f"config key 'cbo_sweep.grids.{grid}': give exactly two parameters, got {list(axes)}")
        (x, x_values), (y, y_values) = axes.items()
        for x_value, y_value in itertools.product(x_values, y_values):
            params = {**sweep["base"], **spec.get("with", {}), x: x_value, y: y_value}
            if "particles" in axes and "particle_batch" not in axes:
                params["particle_batch"] = params["particles"]
            points.append(SweepPoint(grid, x, x_value, y, y_value, params))
    return points


def sweep_config_problems(config: dict, schema: dict) -> list[str]:
    """Each sweep point's parameters must be valid CBO parameters: a grid value is checked as the
    base's own value would be (e.g. `tau: [-1]` is refused before any job runs)."""
    if "cbo_sweep" not in config:
        return []
    validator = subschema_validator(schema, "cbo_params")
    problems = {}
    try:
        points = sweep_points(config["cbo_sweep"])
    except ValueError as err:
        return [str(err)]
    for point in points:
        for error in validator.iter_errors(point.params):
            param = error.absolute_path[0] if error.absolute_path else ""
            key = f"cbo_sweep.grids.{point.grid}.{param}"
            problems.setdefault(key, f"config key '{key}': {error.message}")
    return sorted(problems.values())


def sweep_seed_problems(config: dict, schema: dict) -> list[str]:
    """The sweep tunes CBO; the study tests it: their replicate seeds must not overlap, so that no run
    of the study repeats a run seed the tuning saw (docs/bellman.md, 'Tuning held apart')."""
    if "cbo_sweep" not in config:
        return []
    study = set(config.get("seeds", []))
    for setting in config.get("cbo", {}).get("settings", {}).values():
        study |= set(setting.get("seeds", []))
    shared = sorted(study & set(config["cbo_sweep"].get("seeds", [])))
    if shared:
        return [f"config key 'cbo_sweep.seeds': {shared} are also seeds of the study ('seeds' or "
                "'cbo.settings.<name>.seeds'); the sweep tunes on seeds of its own"]
    return []
