"""The bellman study's problem as the shipped config.yaml gives it (`problem`), for the benchmarks:
the dataclasses carry no defaults, the config is the one home of these values."""

from pathlib import Path

import yaml

from rlstudy.bellman.sde import Dynamics, Problem

_SHIPPED = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())
DYNAMICS = Dynamics(**_SHIPPED["problem"]["dynamics"])
PROBLEM = Problem(DYNAMICS, _SHIPPED["problem"]["gamma"])
# The CBO settings (name -> parameters) and SGD's control-task parameters, as the shipped config gives them.
CBO_SETTINGS = {name: setting["params"] for name, setting in _SHIPPED["cbo"]["settings"].items()}
CBO_NOTEBOOK = CBO_SETTINGS["cbo"]  # the notebook's CBO setting
SGD_CONTROL = _SHIPPED["sgd"]["control"]
