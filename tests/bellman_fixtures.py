"""The bellman study's problem as the shipped config gives it (config.yaml `problem`), for the tests:
the dataclasses carry no defaults, so the tests read the one home of these values too."""

from pathlib import Path

import yaml

from rlstudy.bellman.problem.sde import Dynamics, Problem

SHIPPED = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())["problem"]


def dynamics(**changes) -> Dynamics:
    """The shipped dynamics, with `changes` (e.g. sigma=0.0, reward_of="next")."""
    return Dynamics(**{**SHIPPED["dynamics"], **changes})


def problem(**changes) -> Problem:
    """The shipped problem, its dynamics with `changes`."""
    return Problem(dynamics(**changes), SHIPPED["gamma"])


PROBLEM = problem()
GAMMA = SHIPPED["gamma"]
