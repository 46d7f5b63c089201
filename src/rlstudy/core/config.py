"""Validation of the workflow's config against its JSON schema, with errors that name the key.

The same schema checks a step's parameters when its CLI is run by hand (core.cli.build), and every
number must be finite: JSON and YAML both spell NaN and infinity, and a schema's bounds let NaN
through (every comparison with NaN is false).
"""

from __future__ import annotations

import importlib.util
import io
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path

import jsonschema
import yaml

class ConfigError(ValueError):
    pass


# The config and claims files are a few KB; a bigger one is refused before it is parsed.
MAX_YAML_BYTES = 1 << 20
# The deepest of them nests 6 levels (cbo_sweep.grids.<grid>.with.<parameter>); PyYAML composes
# nesting by recursion, and a few KB of brackets would end in a RecursionError deep in a loader.
MAX_YAML_DEPTH = 32
# Set at the top level, it makes Snakemake's loader (yte) evaluate the file's `?expr` values as Python.
YTE_KEY = "__use_yte__"


class PythonEvents(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's own scanner and parser, in Python."""

    def __init__(self, stream):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


try:  # libyaml's scanner and parser, in C: PyYAML's, in Python, took a fifth of a Snakemake start
    from yaml.cyaml import CParser as LibyamlEvents
except ImportError:  # a PyYAML built without libyaml
    LibyamlEvents = None


class _StrictComposer(yaml.composer.Composer, yaml.constructor.SafeConstructor):
    """YAML's safe loading without anchors and aliases (no file of the project needs them, and nested
    aliases, a "billion laughs", make a few lines a structure that takes hours to walk), nested at
    most MAX_YAML_DEPTH levels, and with every key of a mapping given once (PyYAML keeps the last
    of two quietly). The nodes are built here, in Python, from the events of a parser class."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise ConfigError(f"{mark.name}, line {mark.line + 1}: YAML aliases (*name) are not allowed here; "
                              "write the values out")
        if self._depth >= MAX_YAML_DEPTH:
            mark = self.peek_event().start_mark
            raise ConfigError(f"{mark.name}, line {mark.line + 1}: nested deeper than {MAX_YAML_DEPTH} levels; "
                              "not a file of ours")
        self._depth += 1
        try:
            return yaml.composer.Composer.compose_node(self, parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            first = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    earlier = first.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the constructor below names it
                    continue
                if earlier is not key_node:
                    mark = key_node.start_mark
                    raise ConfigError(f"{mark.name}, line {mark.line + 1}: key {key!r} given twice (first on line "
                                      f"{earlier.start_mark.line + 1}); keep one")
        return yaml.constructor.SafeConstructor.construct_mapping(self, node, deep=deep)


def strict_loader(events: type) -> type:
    """The strict loader over a parser class's events. The composer comes first among the bases, so that
    its Python composition, which holds the checks, builds the nodes where libyaml's parser has its own."""

    class StrictLoader(_StrictComposer, events, yaml.resolver.Resolver):
        def __init__(self, stream):
            events.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._depth = 0

    return StrictLoader


STRICT_LOADER = strict_loader(LibyamlEvents or PythonEvents)


def parse_yaml(text: str, name: str, what: str, loader: type = STRICT_LOADER):
    """YAML (or JSON) text read with load_yaml's limits but the size; `name` names it in errors."""
    try:
        stream = io.StringIO(text)
        stream.name = name  # the name its marks, and so its errors, give
        parser = loader(stream)
        try:
            data = parser.get_single_data()
        finally:
            parser.dispose()
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        at = f", line {where.line + 1}" if where is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"the {what} {name}{at}: not valid YAML ({problem})") from err
    if isinstance(data, Mapping) and YTE_KEY in data:
        raise ConfigError(f"the {what} {name} sets {YTE_KEY}: a YTE template, whose values Snakemake would run as "
                          "Python; the project's config and profile files are plain data (docs/reliability.md)")
    return data


def load_yaml(path: str | Path, what: str):
    """A YAML (or JSON) file of the project's configuration, read with limits: at most MAX_YAML_BYTES,
    no aliases, nested at most MAX_YAML_DEPTH levels, each key of a mapping once, no YTE template,
    safe types only. Errors are one line naming the file."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_YAML_BYTES + 1)
    except OSError as err:
        raise ConfigError(f"cannot read the {what} {path}: {err.strerror or err}") from err
    if len(data) > MAX_YAML_BYTES:
        raise ConfigError(f"the {what} {path} is larger than {MAX_YAML_BYTES >> 20} MiB; not a file of ours")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"the {what} {path} is not UTF-8 text ({err.reason} at byte {err.start})") from err
    return parse_yaml(text, str(path), what)


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


def _chosen_form(error: jsonschema.ValidationError) -> jsonschema.ValidationError | None:
    """Of a value that fits none of a oneOf's forms, the error within the one form its constant picks
    (a claim test's `kind: ranking`), so that the message names the key at fault in that form, not
    the keys the other forms lack; where the constant picks no form, its enum's error (`kind: rank`)."""
    forms: dict = {}
    for e in error.context:
        forms.setdefault(e.relative_schema_path[0], []).append(e)
    if len(forms) < 2 or not any(e.validator == "const" for e in error.context):
        return None  # no form is picked by a constant (config 'seeds': a list or a mapping)
    picked = [errors for errors in forms.values() if not any(e.validator == "const" for e in errors)]
    if len(picked) == 1:
        errors = picked[0]
        specific = [e for e in errors if e.validator not in ("unevaluatedProperties", "additionalProperties")]
        return jsonschema.exceptions.best_match(specific or errors)
    enums = [e for e in error.context if e.validator == "enum"]
    return enums[0] if enums else None


def _describe(error: jsonschema.ValidationError, root: dict, whole_config: bool) -> tuple[str, str]:
    """The key a schema violation is at, and what is wrong there."""
    key = _key(error.absolute_path)
    if error.validator in ("oneOf", "anyOf") and error.context:
        chosen = _chosen_form(error)
        if chosen is not None:
            return _describe(chosen, root, whole_config)
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
    if error.validator == "type" and isinstance(error.instance, str) and error.validator_value in ("number", "integer"):
        if isinstance(yaml12_scalar(error.instance), (int, float)):  # 1e-3: a float in YAML 1.2, text in PyYAML's 1.1
            return key, f"{error.message} (YAML reads {error.instance} as text: write it with a point, e.g. 1.0e-3)"
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


# JSON Schema's `integer` is a number without a fraction, so 10000.0 passes it; the project's integers
# (seeds, counts, sizes) are written as integers, and a float reaching range() or a seed stream is a
# traceback naming no key. Here `integer` is a Python int (a bool is not one).
_STRICT_INTEGERS = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool))
_StrictValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_STRICT_INTEGERS)


def strict_validator(schema: dict) -> jsonschema.Draft202012Validator:
    """A validator of schema whose integers are Python ints (not 10000.0)."""
    return _StrictValidator(schema)


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
    schema = load_yaml(schema_path, "schema")
    whole_config = document == "config"
    problems = [f"{document} key '{key}': {message}"
                for key, message in _problems(strict_validator(schema), config, schema, whole_config)]
    if problems:
        lines = "\n  ".join(problems)
        heading = "configuration" if whole_config else document
        raise ConfigError(f"invalid {heading} ({len(problems)} problem(s)):\n  {lines}")
    problems = [problem for check in checks for problem in check(config, schema)]
    if problems:
        lines = "\n  ".join(problems)
        raise ConfigError(f"invalid configuration ({len(problems)} problem(s)):\n  {lines}")


def config_from_files(paths: Sequence[str | Path], schema: str | Path, checks: Sequence[Check] = ()) -> dict:
    """The config files read with limits (load_yaml), merged in order as Snakemake merges them, and
    checked: what a step run by hand reads under --from-config (core/cli.py)."""
    from snakemake.utils import update_config

    config: dict = {}
    for path in paths:
        values = load_yaml(path, "config file")
        if not isinstance(values, dict):
            raise ConfigError(f"the config file {path} is not a mapping of keys to values")
        update_config(config, values)
    validate_config(config, schema, checks=checks)
    return config


def subschema_validator(schema: dict, name: str) -> jsonschema.Draft202012Validator:
    """A validator of one of the schema's $defs (e.g. a CBO setting), with the other $defs in reach."""
    return jsonschema.Draft202012Validator({**schema["$defs"][name], "$defs": schema["$defs"]})


def schema_file() -> Path:
    """The workflow's config schema, which the steps run by hand are checked by: where the package says
    its checkout keeps it (rlstudy.CONFIG_SCHEMA). Core names no path of the workflow's; the Snakefile
    passes its own to validate_config."""
    import rlstudy

    return rlstudy.CONFIG_SCHEMA


@cache
def schema() -> dict:
    """The workflow's config schema (schema_file()), read once per process."""
    return load_yaml(schema_file(), "schema")


# A parameter dataclass's fields may hold tuples where the config has lists.
_TUPLES_ARE_ARRAYS = _STRICT_INTEGERS.redefine(
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


# `--config` values are a line each: a few hundred values at most. Snakemake reads them with YAML's
# BaseLoader, aliases included, so that `--config 'x=[&a [0,0,...], &b [*a,*a,...], ...]'` is a
# million strings in 200 characters, and typing and validating them took minutes.
MAX_COMMAND_LINE_VALUES = 10_000


def check_command_line_size(given: Mapping) -> None:
    """Refuse `--config` values that share a list or mapping (YAML aliases) or hold more than
    MAX_COMMAND_LINE_VALUES values, after walking at most that many (no recursion)."""
    seen: set[int] = set()
    pending = list(given.items())
    count = 0
    while pending:
        key, value = pending.pop()
        count += 1
        if count > MAX_COMMAND_LINE_VALUES:
            raise ConfigError(f"--config: more than {MAX_COMMAND_LINE_VALUES} values (under key '{key}'); "
                              "a config this large belongs in a file (--configfile)")
        if isinstance(value, (Mapping, list)):
            if id(value) in seen:
                raise ConfigError(f"--config {key}=...: YAML aliases (*name) are not allowed; write the values out")
            seen.add(id(value))
            pending.extend((key, v) for v in (value.values() if isinstance(value, Mapping) else value))


# The scalars of YAML 1.2's core schema that a config value can be: booleans, integers, floats.
# YAML 1.1 (PyYAML's) would also make `yes`, `on` and `off` booleans and leave `1e-3` a string.
_BOOLEANS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INTEGER = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_SPECIAL_FLOATS = re.compile(r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")


def yaml12_scalar(text: str):
    """A command-line string as YAML 1.2's core schema types it: a bool, an int, a float, or itself."""
    if text in _BOOLEANS:
        return _BOOLEANS[text]
    if _INTEGER.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _SPECIAL_FLOATS.fullmatch(text):  # .inf, -.inf, .nan: the finite-number check names them
        return float(text.lower().replace(".", ""))
    return text


def _typed(value):
    if isinstance(value, Mapping):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return yaml12_scalar(value) if isinstance(value, str) else value


def _as_text(value, text: str | None):
    """A top-level --config value as the text it was given as: Snakemake made `1e3` the float 1000.0."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return text if text is not None else str(value)
    return value


def merged_config(base, override):
    """override merged over base key by key, as Snakemake merges config files."""
    if isinstance(base, Mapping) and isinstance(override, Mapping):
        return {**base, **{k: merged_config(base.get(k), v) for k, v in override.items()}}
    return override


def command_line_values(given: Mapping, config: Mapping | None = None, root: dict | None = None,
                        arguments: Sequence[str] | None = None) -> dict:
    """Snakemake's --config values typed as a config file's would be.

    Snakemake makes a top-level value an int or a float where Python reads one, `True` and `False`
    booleans, and leaves every other scalar a string (`tensorboard=true`, and every scalar of
    `seeds=[0,1]`, which it reads with YAML's BaseLoader). Here every scalar is typed as YAML 1.2
    would (yaml12_scalar), but where the schema (`root`, the workflow's by default) wants the text
    the value was: a folder named `2020` or `1e3` for `authors_data` stays a path. `config` is the
    config the values are merged over (a section given in part is judged whole); `arguments`, the
    `key=value` words of --config as given (Snakemake's config_args), hold the text of each number."""
    root = schema() if root is None else root
    texts = dict(word.partition("=")[::2] for word in arguments or () if isinstance(word, str))
    values = {}
    for key, value in given.items():
        typed = _typed(value)
        if key in root.get("properties", {}):
            valid = subschema_of(root, key).is_valid
            base = (config or {}).get(key)
            as_text = _as_text(value, texts.get(key))
            if not valid(merged_config(base, typed)) and valid(merged_config(base, as_text)):
                typed = as_text
        values[key] = typed
    return values


def subschema_of(root: dict, key: str) -> jsonschema.Draft202012Validator:
    """A validator of one top-level key of the schema, with its $defs in reach."""
    return jsonschema.Draft202012Validator({**root["properties"][key], "$defs": root.get("$defs", {})})


# The config values that need an optional extra of pyproject.toml: (key, module the jobs import, extra).
OPTIONAL_EXTRAS = [("tensorboard", "tensorboard", "tensorboard")]


def missing_extras(config: dict, _schema: dict | None = None) -> list[str]:
    """A check for validate_config: each `key: true` whose extra is not installed where Snakemake
    runs (and so where its jobs run, outside --sdm conda), with the command that installs it."""
    return [f"config key '{key}': true needs the optional package '{module}', not installed for {sys.executable}; "
            f"install it with: pip install -e '.[{extra}]' (or set {key}: false)"
            for key, module, extra in OPTIONAL_EXTRAS
            if config.get(key) is True and importlib.util.find_spec(module) is None]
