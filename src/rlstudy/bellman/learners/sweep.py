"""The CBO parameter sweep: grids of two parameters each, every other parameter at the base setting.

config `cbo_sweep.setting` names the CBO setting the sweep starts from and `cbo_sweep.overrides` the
parameters it changes (resolve_sweep: the base is that setting's parameters with the overrides).

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
    refuse_repeated_labels(points)
    return points


def refuse_repeated_labels(points: list[SweepPoint]) -> None:
    """A label names a point's run folder: two points of a grid whose values print alike (1234567.0
    and 1234568.0 are both 1.23457e+06) would share one run, so they are refused, naming both."""
    seen = {}
    for point in points:
        other = seen.setdefault((point.grid, point.label), point)
        if other is not point:
            raise ValueError(f"config key 'cbo_sweep.grids.{point.grid}': the points "
                             f"{point.x}={other.x_value!r}, {point.y}={other.y_value!r} and "
                             f"{point.x}={point.x_value!r}, {point.y}={point.y_value!r} are both labelled "
                             f"{point.label!r} and would share one run folder; give values that differ "
                             "in their first 6 significant digits")


def resolve_sweep(config: dict) -> dict:
    """config `cbo_sweep` with its base resolved: {task, estimator, seeds, base, grids}, the base being
    the parameters of the setting `cbo_sweep.setting` with `cbo_sweep.overrides` over them."""
    sweep = config["cbo_sweep"]
    settings = config["cbo"]["settings"]
    if sweep["setting"] not in settings:
        raise ValueError(f"config key 'cbo_sweep.setting': {sweep['setting']!r} is not a CBO setting; "
                         f"allowed: {sorted(settings)}")
    base = {**settings[sweep["setting"]]["params"], **sweep["overrides"]}
    return {"task": sweep["task"], "estimator": sweep["estimator"], "seeds": sweep["seeds"], "base": base,
            "grids": sweep["grids"]}


def sweep_config_problems(config: dict, schema: dict) -> list[str]:
    """Each sweep point's parameters must be valid CBO parameters: a grid value is checked as the
    base's own value would be (e.g. `noise: [-1]` is refused before any job runs)."""
    if "cbo_sweep" not in config:
        return []
    validator = subschema_validator(schema, "cbo_params")
    problems = {}
    try:
        points = sweep_points(resolve_sweep(config))
    except ValueError as err:
        return [str(err)]
    for point in points:
        for error in validator.iter_errors(point.params):
            param = error.absolute_path[0] if error.absolute_path else ""
            key = f"cbo_sweep.grids.{point.grid}.{param}"
            problems.setdefault(key, f"config key '{key}': {error.message}")
    return sorted(problems.values())

