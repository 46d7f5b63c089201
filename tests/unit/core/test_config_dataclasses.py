"""One home per hyperparameter: each config section's keys, as the schema allows them and as the
shipped config gives them, are exactly the fields of the dataclass its step builds."""

import dataclasses
from pathlib import Path

import pytest
import yaml

from rlstudy.agents.mpo.config import MPOParams
from rlstudy.agents.registry import BASICS, build_agent
from rlstudy.bellman.learners.cbo import CBOParams
from rlstudy.bellman.problem.sde import Dynamics
from rlstudy.bellman.learners.sgd import SGDParams
from rlstudy.offline.double_dqn import LearnerParams
from rlstudy.offline.envs import AtariPreprocessing

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())


def resolve(node: dict) -> list[dict]:
    """A schema node and every node it refers to ($ref, allOf), whose properties it admits."""
    nodes = [node]
    if "$ref" in node:
        nodes += resolve(SCHEMA["$defs"][node["$ref"].removeprefix("#/$defs/")])
    for part in node.get("allOf", []):
        nodes += resolve(part)
    return nodes


def schema_child(node: dict, key: str) -> dict:
    for part in resolve(node):
        if key in part.get("properties", {}):
            return part["properties"][key]
    for part in resolve(node):
        if isinstance(part.get("additionalProperties"), dict):
            return part["additionalProperties"]
    raise KeyError(key)


def schema_keys(path: tuple[str, ...]) -> set[str]:
    node = SCHEMA
    for key in path:
        node = schema_child(node, key)
    return {key for part in resolve(node) for key in part.get("properties", {})}


def config_keys(path: tuple[str, ...]) -> set[str]:
    section = CONFIG
    for key in path:
        section = section[key]
    return set(section)


def fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


SECTIONS = [
    (("problem", "dynamics"), Dynamics, set()),
    (("reference",), SGDParams, {"estimator"}),  # the residual Q* is trained with; not an SGD parameter
    (("sgd", "evaluation"), SGDParams, set()),
    (("sgd", "control"), SGDParams, set()),
    *[(("cbo", "settings", name, "params"), CBOParams, set()) for name in CONFIG["cbo"]["settings"]],
    (("mpo",), MPOParams, {"env", "seeds", "solved_return"}),  # the run's, not the learner's
    *[((agent, "params"), build_agent(agent).params, set()) for agent in BASICS],
    (("offline", "regular"), LearnerParams, set()),
    (("offline", "atari"), LearnerParams, set()),
    (("offline", "atari_preprocessing"), AtariPreprocessing, set()),
]


@pytest.mark.parametrize("path, cls, run_keys", SECTIONS, ids=[".".join(s[0]) for s in SECTIONS])
def test_schema_config_and_dataclass_agree(path, cls, run_keys):
    assert schema_keys(path) - run_keys == fields(cls), "schema section and dataclass differ"
    assert config_keys(path) - run_keys == fields(cls), "shipped config section and dataclass differ"


def test_the_bellman_problem_is_one_section_and_gamma_has_one_home():
    """The dynamics and the discount are config `problem`'s alone: no other bellman section, and no
    parameter dataclass, holds a gamma (the learned Q*, the exact Q, SGD and CBO read the problem's)."""
    assert schema_keys(("problem",)) == config_keys(("problem",)) == {"dynamics", "gamma"}
    for cls in (SGDParams, CBOParams, Dynamics):
        assert "gamma" not in fields(cls)
    bellman = ("reference", "sgd", "cbo", "cbo_sweep")
    assert "gamma:" not in yaml.safe_dump({key: CONFIG[key] for key in bellman})


PARAMETER_CLASSES = sorted({cls for _, cls, _ in SECTIONS}, key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", PARAMETER_CLASSES, ids=[c.__name__ for c in PARAMETER_CLASSES])
def test_parameter_dataclasses_carry_no_defaults_that_the_config_holds(cls):
    """config.yaml is each value's one home: a default beside it would be a second one that can drift."""
    defaulted = [f.name for f in dataclasses.fields(cls)
                 if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING]
    assert defaulted == []


def test_the_sweep_derives_from_a_cbo_setting_by_overrides():
    sweep = CONFIG["cbo_sweep"]
    assert sweep["setting"] in CONFIG["cbo"]["settings"]
    assert set(sweep["overrides"]) <= fields(CBOParams)
