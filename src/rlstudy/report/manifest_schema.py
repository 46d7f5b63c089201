"""A manifest read back is data, checked field by field before any of it reaches a path or a command.

`load_manifest` reads docs/manifest.json (or another) as a regular file of bounded size and holds it to
SCHEMA: every field's type and range; each artefact a relative path under data/, results/ or figures/
whose every part is a plain name (no `..`, no leading `-` or `.`, no characters outside the set the
workflow's paths use), with a sha256, a size and a known kind; the tables from the fixed set TABLES,
each at its own path, every row as long as its columns; the verdicts from the three there are; counts
and seeds integers (never floats) within int64. A violation is one line naming the field
(InputError). Nothing of the manifest is ever a Snakemake option: `snakemake_args` is shown for
comparison only (report/verify.py).
"""

from __future__ import annotations

from pathlib import Path

import jsonschema

from rlstudy.claims.rules import FAILS, HOLDS, INCONCLUSIVE
from rlstudy.core.config import strict_validator
from rlstudy.core.errors import InputError
from rlstudy.core.regular_files import read_json, shown
from rlstudy.core.seed_blocks import BLOCKS
from rlstudy.report.manifest import FOLDERS, FORMAT, KIND_NAMES, TABLES

# The paper-scale manifest is about 1 MB (3,523 artefacts); 64 times that is not a manifest of ours.
MAX_MANIFEST_BYTES = 64 << 20
INT64_MAX = 2**63 - 1
# A relative path under a top folder, every part a plain name of the characters the workflow's paths use.
PART = r"[A-Za-z0-9_=+,@][A-Za-z0-9_.=+,@-]{0,199}"
ARTEFACT_PATH = rf"^(?:{'|'.join(FOLDERS)})(?:/{PART}){{1,16}}$"
SHA256 = r"^[0-9a-f]{64}$"
COMMIT = r"^(?:[0-9a-f]{40}(?:\+dirty)?|none|unknown \(not a git checkout\))$"
COUNT = {"type": "integer", "minimum": 0, "maximum": INT64_MAX}
SEED = {"type": "integer", "minimum": 0, "maximum": INT64_MAX}
TEXT = {"type": "string", "maxLength": 4000}
WORD_KEYS = {"type": "object", "propertyNames": {"pattern": r"^[A-Za-z0-9_.-]{1,100}$"}}

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "commit", "commits_of_artefacts", "scale", "snakemake_args", "seed", "seed_block",
                 "platform", "counts", "verdicts", "tables", "artefacts"],
    "properties": {
        "format": {"const": FORMAT},
        "commit": {"type": "string", "pattern": COMMIT},
        "checkout": {"type": "string", "pattern": COMMIT},
        "commits_of_artefacts": {"type": "object", "propertyNames": {"pattern": COMMIT}, "additionalProperties": COUNT},
        "scale": {"enum": ["paper", "smoke"]},
        "snakemake_args": {"type": "array", "maxItems": 100, "items": TEXT},
        "seed": {"anyOf": [SEED, {"type": "null"}]},
        "seed_block": {
            "type": "object", "additionalProperties": False, "required": ["block", "lists", "from"],
            "properties": {"block": {"enum": list(BLOCKS)}, "from": {"enum": ["results/seed_plan.csv", "config.yaml"]},
                           "lists": {**WORD_KEYS, "additionalProperties": {"type": "array", "maxItems": 100_000,
                                                                           "items": SEED}}}},
        "platform": {
            "type": "object", "required": ["rounding", "cores", "torch_config"],
            "properties": {
                "cores": {"anyOf": [COUNT, {"type": "null"}]},
                "torch_config": {"type": "array", "maxItems": 1000, "items": TEXT},
                "rounding": {
                    "type": "object",
                    "required": ["machine", "cpu_vendor", "cpu_model", "blas_flags", "numpy_blas", "openblas_kernels",
                                 "torch_cpu_capability", "torch_mkl", "environment", "versions"],
                    "properties": {
                        **{key: TEXT for key in ("machine", "cpu_vendor", "cpu_model", "numpy_blas",
                                                 "openblas_kernels", "torch_cpu_capability")},
                        "blas_flags": {"type": "array", "maxItems": 100, "items": TEXT},
                        "torch_mkl": {"type": "boolean"},
                        "environment": {**WORD_KEYS, "additionalProperties": TEXT},
                        "versions": {**WORD_KEYS, "additionalProperties": TEXT}}}}},
        "counts": {"type": "object", "properties": {"by_kind": {"type": "object", "additionalProperties": COUNT}},
                   "additionalProperties": COUNT},
        "verdicts": {**WORD_KEYS, "additionalProperties": {"enum": [HOLDS, FAILS, INCONCLUSIVE]}},
        "tables": {
            "type": "object", "propertyNames": {"enum": list(TABLES)},
            "additionalProperties": {
                "type": "object", "additionalProperties": False, "required": ["path", "parameters", "columns", "rows"],
                "properties": {"path": {"enum": list(TABLES.values())}, "parameters": {"type": "object"},
                               "columns": {"type": "array", "minItems": 1, "items": TEXT},
                               "rows": {"type": "array", "items": {"type": "array", "items": TEXT}}}}},
        "artefacts": {
            "type": "object", "propertyNames": {"pattern": ARTEFACT_PATH},
            "additionalProperties": {
                "type": "object", "additionalProperties": False, "required": ["sha256", "size", "kind"],
                "properties": {"sha256": {"type": "string", "pattern": SHA256}, "size": COUNT,
                               "kind": {"enum": list(KIND_NAMES)}, "measured": {"const": True}}}},
    },
}
_VALIDATOR = strict_validator(SCHEMA)


def _field(error: jsonschema.ValidationError) -> str:
    parts = [str(part) for part in error.absolute_path]
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        parts.append(missing)
    return ".".join(parts) or "(top level)"


def _what(error: jsonschema.ValidationError) -> str:
    if error.validator == "required":
        return "is missing"
    if error.validator == "propertyNames":
        return f"has a key that is not allowed ({shown(str(error.instance))[:80]}: {error.message[:200]})"
    return shown(error.message)[:300]


def problems(record) -> list[str]:
    """Every violation of SCHEMA, one line each naming the field; then the checks a schema cannot make."""
    errors = sorted(_VALIDATOR.iter_errors(record), key=lambda e: [str(p) for p in e.absolute_path])
    found = [f"field '{_field(error)}' {_what(error)}" for error in errors]
    if found:
        return found
    for name, table in record["tables"].items():
        if table["path"] != TABLES[name]:
            found.append(f"field 'tables.{name}.path' is {shown(table['path'])}, not {TABLES[name]}")
        if any(len(row) != len(table["columns"]) for row in table["rows"]):
            found.append(f"field 'tables.{name}.rows': a row is not as long as the columns")
    return found


def load_manifest(path: str | Path) -> dict:
    """The manifest at path, checked (problems): one line naming the file and its first bad field otherwise."""
    record = read_json(path, MAX_MANIFEST_BYTES, "a manifest")
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise InputError(f"{shown(path)}: not a manifest of format {FORMAT} (rlstudy.report.cli.write_manifest)")
    found = problems(record)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise InputError(f"{shown(path)}: not a valid manifest: {found[0]}{more}")
    return record
