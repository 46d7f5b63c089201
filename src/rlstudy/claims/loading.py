"""Reading claims.yaml: checked against its schema, claim ids unique, each claim's family declared.
The library's, so that the
Snakefile (which checks the file before any job runs) and the claims' steps share it; and the result
tables the steps are given by name (`--table NAME=CSV`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rlstudy.core.config import ConfigError, load_yaml, validate_config
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv

if TYPE_CHECKING:  # the Snakefile reads claims.yaml through load_claims: no pandas at its start
    import pandas as pd


def load_claims(path: Path, schema: Path) -> dict:
    """The claims file, or a one-line InputError naming what is wrong with it."""
    try:
        claims = load_yaml(path, "claims file")
        validate_config(claims, schema, document=str(path))
    except ConfigError as err:
        raise InputError(str(err)) from err
    ids = [claim["id"] for claim in claims["claims"]]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InputError(f"{path}: claim ids must be unique; repeated: {duplicates}")
    for claim in claims["claims"]:
        if claim["family"] not in claims["families"]:
            raise InputError(f"{path}: claim {claim['id']!r}: family {claim['family']!r} is not one of "
                             f"families {sorted(claims['families'])}")
    return claims


def named_tables(pairs: list[str]) -> tuple[dict[str, str], dict[str, pd.DataFrame]]:
    """`--table`'s NAME=CSV pairs: the paths and the tables by name."""
    paths = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep:
            raise InputError(f"--table: expected NAME=CSV, got {pair!r}")
        paths[name] = path
    return paths, {name: load_csv(path, f"the {name} table") for name, path in paths.items()}
