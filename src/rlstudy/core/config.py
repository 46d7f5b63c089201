"""Validation of the workflow's config against its JSON schema, with errors that name the key.

The same schema checks a step's parameters when its CLI is run by hand (core.cli.build), and every
number must be finite: JSON and YAML both spell NaN and infinity, and a schema's bounds let NaN
through (every comparison with NaN is false).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path

import jsonschema
import yaml

# The schema the Snakefile checks the config with; the package runs from this checkout (editable
# install, or src/ on PYTHONPATH), so it lies beside src/.
SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    pass


# The config and claims files are a few KB; a bigger one is refused before it is parsed.
MAX_YAML_BYTES = 1 << 20


class _NoAliasLoader(yaml.SafeLoader):
    """YAML's safe loader without anchors and aliases: no file of the project needs them, and nested
    aliases (a "billion laughs") make a few lines a structure that takes hours to walk."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise ConfigError(f"{mark.name}, line {mark.line + 1}: YAML aliases (*name) are not allowed here; "
                              "write the values out")
        return super().compose_node(parent, index)


def load_yaml(path: str | Path, what: str):
    """A YAML (or JSON) file of the project's configuration, read with limits: at most MAX_YAML_BYTES,
    no aliases, safe types only. Errors are one line naming the file."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_YAML_BYTES + 1)
    except OSError as err:
        raise ConfigError(f"cannot read the {what} {path}: {err.strerror or err}") from err
    if len(data) > MAX_YAML_BYTES:
        raise ConfigError(f"the {what} {path} is larger than {MAX_YAML_BYTES >> 20} MiB; not a file of ours")
    try:
        loader = _NoAliasLoader(data.decode("utf-8"))
        loader.name = str(path)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except UnicodeDecodeError as err:
        raise ConfigError(f"the {what} {path} is not UTF-8 text ({err.reason} at byte {err.start})") from err
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        at = f", line {where.line + 1}" if where is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"the {what} {path}{at}: not valid YAML ({problem})") from err


def check_config_files(paths) -> None:
    """Read the raw config files Snakemake merged (config.yaml, a profile's, --configfile) with
    load_yaml's limits before the merged config is walked: Snakemake's own loader accepts aliases,
    and validating a "billion laughs" would hang every start."""
    for path in paths:
        load_yaml(path, "config file")


Check = Callable[[dict, dict], list[str]]


def _key(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _allowed_keys(subschema: dict, root: dict) -> list[str]:
    keys = set(subschema.get("properties", {}))
    ref = subschema.get("$ref", "")
    if ref.startswith("#/$defs/"):
        keys |= set(_allowed_keys(root["$defs"][ref.removeprefix("#/$defs/")], root))
    return sorted(keys)


def _describe(error: jsonschema.ValidationError, root: dict, whole_config: bool) -> tuple[str, str]:
    """The key a schema violation is at, and what is wrong there."""
    key = _key(error.absolute_path)
    if error.validator in ("oneOf", "anyOf") and error.context:
        # a value that fits none of its forms: within the form of its type, that form's problem; else the types
        within = [e for e in error.context if e.validator != "type"]
        if within:
            return _describe(jsonschema.exceptions.best_match(within), root, whole_config)
        types = [e.validator_value for e in error.context]
        message = f"{error.instance!r} is not of type {' or '.join(repr(t) for t in types)}"
        if whole_config and "array" in types and len(error.absolute_path) == 1:
            message += f"; on the command line give a list in brackets, e.g. --config '{key}=[0,1]'"
        return key, message
    top_level_list = error.validator == "type" and error.validator_value == "array" and len(error.absolute_path) == 1
    if whole_config and top_level_list:
        return key, f"{error.message}; on the command line give a list in brackets, e.g. --config '{key}=[0,1]'"
    if error.validator == "enum":
        return key, f"{error.instance!r} is not allowed; allowed values: {error.validator_value}"
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        allowed = _allowed_keys(error.schema, root)
        return key, error.message + (f"; allowed keys: {allowed}" if allowed else "")
    return key, error.message


def nonfinite_numbers(values, path: tuple = ()) -> list[tuple[str, str]]:
    """(key, what is wrong) for every NaN or infinite number in a nested dict or list."""
    if isinstance(values, Mapping):
        return [problem for k, v in values.items() for problem in nonfinite_numbers(v, (*path, k))]
    if isinstance(values, (list, tuple)):
        return [problem for i, v in enumerate(values) for problem in nonfinite_numbers(v, (*path, i))]
    if isinstance(values, float) and not math.isfinite(values):
        return [(_key(path), f"{values} is not a finite number")]
    return []


def _problems(validator: jsonschema.Draft202012Validator, values, root: dict, whole_config: bool,
              skip=()) -> list[tuple[str, str]]:
    errors = sorted(validator.iter_errors(values), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [_describe(e, root, whole_config) for e in errors if e.validator not in skip] + nonfinite_numbers(values)


def validate_config(config: dict, schema_path: str | Path, checks: Sequence[Check] = (),
                    document: str = "config") -> None:
    """Raise ConfigError listing every violation of the schema, each naming its key, and every
    number that is not finite; then those of `checks`, a study's checks that a schema cannot
    express (each returns its problems as lines). `document` names the file in the messages: the
    workflow's config, or another file checked the same way (claims.yaml)."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    whole_config = document == "config"
    problems = [f"{document} key '{key}': {message}"
                for key, message in _problems(jsonschema.Draft202012Validator(schema), config, schema, whole_config)]
    if problems:
        lines = "\n  ".join(problems)
        heading = "configuration" if whole_config else document
        raise ConfigError(f"invalid {heading} ({len(problems)} problem(s)):\n  {lines}")
    problems = [problem for check in checks for problem in check(config, schema)]
    if problems:
        lines = "\n  ".join(problems)
        raise ConfigError(f"invalid configuration ({len(problems)} problem(s)):\n  {lines}")


def subschema_validator(schema: dict, name: str) -> jsonschema.Draft202012Validator:
    """A validator of one of the schema's $defs (e.g. a CBO setting), with the other $defs in reach."""
    return jsonschema.Draft202012Validator({**schema["$defs"][name], "$defs": schema["$defs"]})


@cache
def schema() -> dict:
    """The workflow's config schema, read once per process."""
    return yaml.safe_load(SCHEMA_PATH.read_text())


# A parameter dataclass's fields may hold tuples where the config has lists.
_TUPLES_ARE_ARRAYS = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "array", lambda _, value: isinstance(value, (list, tuple)))
_SectionValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_TUPLES_ARE_ARRAYS)


def section_problems(values: dict, definition: str) -> list[str]:
    """What the schema's $defs[definition] finds wrong with a config section given to a step by hand,
    one line per key, every number finite. Keys left out are the dataclass's to judge (it has
    defaults the schema does not know), so `required` is not checked here."""
    full = schema()
    validator = _SectionValidator({**full["$defs"][definition], "$defs": full["$defs"]})
    problems = _problems(validator, values, full, False, skip=("required",))
    return [f"key '{key}': {message}" for key, message in problems]


def command_line_values(given: Mapping) -> dict:
    """The lists and sections of Snakemake's --config, with their scalars typed as YAML types them.

    Snakemake reads `--config 'seeds=[0,1]'` with YAML's BaseLoader, which leaves every scalar a
    string (['0', '1']); merged over the config as read here, they validate as the same values in a
    config file would."""
    def typed(value):
        if isinstance(value, Mapping):
            return {k: typed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [typed(v) for v in value]
        if isinstance(value, str):
            try:
                return yaml.safe_load(value)
            except yaml.YAMLError:
                return value
        return value
    return {key: typed(value) for key, value in given.items() if isinstance(value, (Mapping, list))}
