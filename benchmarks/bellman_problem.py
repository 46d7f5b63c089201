"""The shipped config.yaml's values for the benchmarks (the dataclasses carry no defaults, the config is
the one home of these values): the bellman study's problem (`problem`), its CBO and SGD settings, and
`shipped(cls, *path, **overrides)`, any learner's parameters from its section with a benchmark's
overrides (tests/shipped_params.py's, which the tests build their learners with)."""

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))  # shipped_params: one home for tests and these
from shipped_params import CONFIG as _SHIPPED  # noqa: E402
from shipped_params import shipped  # noqa: E402, F401

from rlstudy.bellman.problem.sde import Dynamics, Problem  # noqa: E402

DYNAMICS = Dynamics(**_SHIPPED["problem"]["dynamics"])
PROBLEM = Problem(DYNAMICS, _SHIPPED["problem"]["gamma"])
# The CBO settings (name -> parameters) and SGD's control-task parameters, as the shipped config gives them.
CBO_SETTINGS = {name: setting["params"] for name, setting in _SHIPPED["cbo"]["settings"].items()}
CBO_NOTEBOOK = CBO_SETTINGS["cbo"]  # the notebook's CBO setting
SGD_CONTROL = _SHIPPED["sgd"]["control"]
