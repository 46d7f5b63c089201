"""What every command-line step shares: parameters as JSON, seeding, threads, clean failures."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Callable, TypeVar

import torch

from ..errors import InputError, PipelineError

T = TypeVar("T")


def parser(description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(description=description,
                                   formatter_class=argparse.ArgumentDefaultsHelpFormatter)


def json_arg(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON: {err}") from err
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def build(cls: type[T], values: dict, where: str) -> T:
    """A parameter dataclass from a dict, with errors that name the config section and the keys."""
    fields = {f.name for f in dataclasses.fields(cls)}
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    unknown, missing = sorted(set(values) - fields), sorted(required - set(values))
    if unknown or missing:
        raise InputError(f"{where}: unknown keys {unknown}, missing keys {missing}; allowed: {sorted(fields)}")
    return cls(**values)


def setup_torch() -> None:
    """Deterministic kernels; the thread count comes from OMP_NUM_THREADS (Snakemake sets it)."""
    torch.use_deterministic_algorithms(True)


def run(main: Callable[[], None]) -> None:
    """Run a step; a PipelineError prints its message alone and exits with status 2."""
    try:
        main()
    except PipelineError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
