"""Validation of the workflow's config against its JSON schema, with errors that name the key."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import jsonschema
import yaml


class ConfigError(ValueError):
    pass


Check = Callable[[dict, dict], list[str]]


def _key(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _allowed_keys(subschema: dict, root: dict) -> list[str]:
    keys = set(subschema.get("properties", {}))
    ref = subschema.get("$ref", "")
    if ref.startswith("#/$defs/"):
        keys |= set(_allowed_keys(root["$defs"][ref.removeprefix("#/$defs/")], root))
    return sorted(keys)


def _describe(error: jsonschema.ValidationError, root: dict, document: str) -> str:
    key = f"{document} key '{_key(error.absolute_path)}'"
    if error.validator == "enum":
        return f"{key}: {error.instance!r} is not allowed; allowed values: {error.validator_value}"
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        allowed = _allowed_keys(error.schema, root)
        return f"{key}: {error.message}" + (f"; allowed keys: {allowed}" if allowed else "")
    return f"{key}: {error.message}"


def validate_config(config: dict, schema_path: str | Path, checks: Sequence[Check] = (),
                    document: str = "config") -> None:
    """Raise ConfigError listing every violation of the schema, each naming its key; then those of
    `checks`, a study's checks that a schema cannot express (each returns its problems as lines).
    `document` names the file in the messages (the workflow's config, or e.g. claims.yaml)."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        lines = "\n  ".join(_describe(e, schema, document) for e in errors)
        heading = "configuration" if document == "config" else document
        raise ConfigError(f"invalid {heading} ({len(errors)} problem(s)):\n  {lines}")
    problems = [problem for check in checks for problem in check(config, schema)]
    if problems:
        lines = "\n  ".join(problems)
        raise ConfigError(f"invalid configuration ({len(problems)} problem(s)):\n  {lines}")


def subschema_validator(schema: dict, name: str) -> jsonschema.Draft202012Validator:
    """A validator of one of the schema's $defs (e.g. a CBO setting), with the other $defs in reach."""
    return jsonschema.Draft202012Validator({**schema["$defs"][name], "$defs": schema["$defs"]})
