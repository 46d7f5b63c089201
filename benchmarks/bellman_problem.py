"""The bellman study's problem as the shipped config.yaml gives it (`problem`), for the benchmarks:
the dataclasses carry no defaults, the config is the one home of these values."""

from pathlib import Path

import yaml

from rlstudy.bellman.sde import Dynamics, Problem

_SHIPPED = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())
DYNAMICS = Dynamics(**_SHIPPED["problem"]["dynamics"])
PROBLEM = Problem(DYNAMICS, _SHIPPED["problem"]["gamma"])
# The notebook's CBO setting, as the shipped config gives it.
CBO_NOTEBOOK = _SHIPPED["cbo"]["settings"]["cbo"]["params"]
