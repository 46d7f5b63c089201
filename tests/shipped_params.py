"""A learner's parameters as the shipped config.yaml gives them (their one home; the dataclasses carry
no defaults), with a test's overrides: tests build learners from the config the workflow runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from rlstudy.core.cli import build

CONFIG = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())


def shipped(cls, *path: str, **overrides):
    """cls built from config.yaml's section at `path` (only the dataclass's fields) and `overrides`."""
    section = CONFIG
    for key in path:
        section = section[key]
    names = {f.name for f in dataclasses.fields(cls)}
    values = {**{k: v for k, v in section.items() if k in names}, **overrides}
    # a test writes a tuple where the config (JSON) has a list; the schema checks lists
    return build(cls, {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}, ".".join(path))
