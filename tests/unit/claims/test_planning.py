"""The seed plan: intersection-union and Holm enter the planned counts, and each seed list gets the
largest count any tested claim reading it needs (claims/planning.planned_max_counts)."""

from pathlib import Path

import pytest

from rlstudy.claims.loading import load_claims
from rlstudy.claims.planning import claim_power, planned_max_counts, planned_seeds, seed_lists_of
from rlstudy.core.statistics import sign_test_power

ROOT = Path(__file__).resolve().parents[3]


def test_two_tests_ask_more_of_each_than_one():
    """Two tests at power 0.8 give a claim 0.64: each is planned at sqrt(0.8), so it needs more pairs."""
    planning = {"power": 0.8, "superiority": 0.75, "share": 0.99, "sizes": [10], "draws": 200, "seed": 0,
                "max_seeds": 200}
    test = {"kind": "ranking", "paired": True}
    one = planned_seeds(test, planning, 0.05)
    two = planned_seeds(test, claim_power(planning, 2), 0.05)
    assert one == 23 and two > one
    assert sign_test_power(two, 0.75, 0.05) ** 2 >= 0.8 > sign_test_power(two - 1, 0.75, 0.05) ** 2
    assert planned_seeds(test, planning, 0.01) > one  # a Holm level asks for more


def test_the_seed_lists_a_test_reads():
    assert seed_lists_of({"table": "summary", "where": {"task": "control", "setting": "sgd"},
                          "lower": {"estimator": "UR"}, "higher": {"estimator": "DS"}}) == ["seeds.control"]
    assert seed_lists_of({"table": "summary", "where": {"task": "control", "estimator": "UR"},
                          "numerator": {"setting": "cbo-adaptive"}, "denominator": {"setting": "sgd"}}) == [
        "cbo.settings.cbo-adaptive.seeds", "seeds.control"]
    assert seed_lists_of({"table": "agents", "where": {}, "lower": {"agent": "ddpg"}, "higher": {"agent": "mpo"}}) == [
        "ddpg.seeds", "mpo.seeds"]


def test_every_tested_seed_list_gets_a_planned_maximum_and_the_study_plans_more():
    claims = load_claims(ROOT / "claims.yaml", ROOT / "workflow/schemas/claims.schema.yaml")
    family, study = planned_max_counts(claims), planned_max_counts(claims, study=True)
    assert {"seeds.evaluation", "seeds.control", "cbo_sweep.seeds", "offline.seeds"} <= set(family)
    assert all(count is None or count >= 5 for count in family.values())
    for name, count in family.items():
        assert study[name] is None or (count is not None and study[name] >= count)
    # the offline claim is one paired test in a family of tested claims: at least the 23 pairs of level 0.05
    assert family["offline.seeds"] >= 23
    with pytest.raises(KeyError):
        family["dqn.seeds"]  # a per-run claim plans no seeds: its runs are decided by their episodes
