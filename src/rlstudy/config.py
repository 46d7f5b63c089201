"""Validation of the workflow's config against its JSON schema, with errors that name the key."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml


class ConfigError(ValueError):
    pass


def _key(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _allowed_keys(subschema: dict, root: dict) -> list[str]:
    keys = set(subschema.get("properties", {}))
    ref = subschema.get("$ref", "")
    if ref.startswith("#/$defs/"):
        keys |= set(_allowed_keys(root["$defs"][ref.removeprefix("#/$defs/")], root))
    return sorted(keys)


def _describe(error: jsonschema.ValidationError, root: dict) -> str:
    key = _key(error.absolute_path)
    if error.validator == "enum":
        return f"config key '{key}': {error.instance!r} is not allowed; allowed values: {error.validator_value}"
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        allowed = _allowed_keys(error.schema, root)
        return f"config key '{key}': {error.message}" + (f"; allowed keys: {allowed}" if allowed else "")
    return f"config key '{key}': {error.message}"


def validate_config(config: dict, schema_path: str | Path) -> None:
    """Raise ConfigError listing every violation of the schema, each naming its key."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        lines = "\n  ".join(_describe(e, schema) for e in errors)
        raise ConfigError(f"invalid configuration ({len(errors)} problem(s)):\n  {lines}")
    problems = _sweep_problems(config["cbo_sweep"], schema) if "cbo_sweep" in config else []
    if problems:
        lines = "\n  ".join(problems)
        raise ConfigError(f"invalid configuration ({len(problems)} problem(s)):\n  {lines}")


def _sweep_problems(sweep: dict, schema: dict) -> list[str]:
    """Each sweep point's parameters must be valid CBO parameters: a grid value is checked as the
    base's own value would be (e.g. `tau: [-1]` is refused before any job runs)."""
    from .sweep import sweep_points

    validator = jsonschema.Draft202012Validator({**schema["$defs"]["cbo_params"], "$defs": schema["$defs"]})
    problems = {}
    try:
        points = sweep_points(sweep)
    except ValueError as err:
        return [str(err)]
    for point in points:
        for error in validator.iter_errors(point.params):
            param = error.absolute_path[0] if error.absolute_path else ""
            key = f"cbo_sweep.grids.{point.grid}.{param}"
            problems.setdefault(key, f"config key '{key}': {error.message}")
    return sorted(problems.values())
