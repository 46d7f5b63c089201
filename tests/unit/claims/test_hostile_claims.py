"""Hostile and broken inputs of the claims: a `where` naming nothing (a typo), a text column as a
metric, a "billion laughs" claims file (render_readme's refusals: tests/unit/report/test_hostile_render.py)."""

import time

import pandas as pd
import pytest

from rlstudy.claims.loading import load_claims
from rlstudy.claims.rules import INCONCLUSIVE, evaluate
from rlstudy.core.errors import InputError

from hostile import ROOT

DEFAULTS = {"min_n": 2, "min_share": 1.0, "level": 0.05,
            "planning": {"power": 0.8, "superiority": 0.75, "share": 0.99, "sizes": [10, 40], "draws": 500, "seed": 0,
                         "max_seeds": 200}}
AGENTS = pd.DataFrame({"agent": ["dqn", "dqn", "qtable"], "env": ["CartPole-v1"] * 2 + ["MountainCar-v0"],
                       "seed": [0, 1, 0], "final_mean_return": [480.0, 490.0, -150.0]})


def verdict(table, test):
    claim = {"id": "c", "source": "s", "statement": "t", "tests": [test]}
    return evaluate(claim, {"agents": table}, DEFAULTS)


def share(**change):
    return {"kind": "share", "table": "agents", "metric": "final_mean_return", "at_least": 0, **change}


def test_a_where_naming_a_value_no_table_holds_is_refused_not_inconclusive():
    """`agent: qtabel` used to select no row and give "inconclusive"."""
    with pytest.raises(InputError, match=r"claim 'c': agent = 'qtabel' selects none of the rows of table 'agents', "
                                         r"and agent is one of .*a typo\?"):
        verdict(AGENTS, share(where={"agent": "qtabel"}))
    with pytest.raises(InputError, match=r"estimator = 'UX' selects none of the rows of table 'agents' where "):
        verdict(AGENTS.assign(estimator="UR"), {"kind": "ranking", "table": "agents", "metric": "final_mean_return",
                                                "where": {"agent": "dqn"}, "lower": {"estimator": "UR"},
                                                "higher": {"estimator": "UX"}})
    with pytest.raises(InputError, match="no column 'agnt' in table 'agents'"):
        verdict(AGENTS, share(where={"agnt": "dqn"}))


def test_data_the_config_left_out_is_inconclusive_not_refused():
    """The authors' dataset (config authors_data: none), an agent not run: known values without rows."""
    assert verdict(AGENTS.assign(dataset="ours"), share(where={"dataset": "authors"}))["verdict"] == INCONCLUSIVE
    assert verdict(AGENTS, share(where={"agent": "ddpg"}))["verdict"] == INCONCLUSIVE


def test_a_text_column_as_metric_is_refused():
    with pytest.raises(InputError, match="claim 'c': metric 'env' of table 'agents' is a text column, not a number"):
        verdict(AGENTS, share(metric="env"))
    with pytest.raises(InputError, match="metric 'env' of table 'agents' is a text column"):
        verdict(AGENTS, share(at_least=None, at_least_column="env") | {"at_least": 0})


def test_a_billion_laughs_claims_file_is_refused_at_once(tmp_path):
    """Loaded and walked at every snakemake start: nested aliases used to hang it."""
    laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))
    path = tmp_path / "claims.yaml"
    path.write_text(laughs)
    start = time.perf_counter()
    with pytest.raises(InputError, match=r"claims\.yaml, line 2: YAML aliases"):
        load_claims(path, ROOT / "workflow/schemas/claims.schema.yaml")
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("where, message", [
    ({"seed": True}, r"where seed = True is a bool, but column 'seed' of table 'agents' holds numbers"),
    ({"seed": "1"}, r"where seed = '1' is a str, but column 'seed' of table 'agents' holds numbers"),
    ({"agent": 3}, r"where agent = 3 is a int, but column 'agent' of table 'agents' holds text"),
])
def test_a_where_value_of_another_type_than_its_column_is_refused(where, message):
    """pandas compares True == 1: `seed: true` selected seed 1's rows."""
    with pytest.raises(InputError, match=rf"claim 'c': {message}"):
        verdict(AGENTS, share(where=where))
    with pytest.raises(InputError, match=r"where seed = True is a bool"):
        verdict(AGENTS, {"kind": "ranking", "table": "agents", "metric": "final_mean_return",
                         "lower": {"seed": True}, "higher": {"seed": 0}})
    verdict(AGENTS, share(where={"seed": 1.0}))  # a float is a number: accepted


def test_a_ranking_with_a_misspelt_number_names_that_key(tmp_path):
    """`margin: 1e-3` is text in YAML 1.1: the error named it, not the keys of the other kinds of test."""
    text = (ROOT / "claims.yaml").read_text()
    first = next(line for line in text.splitlines() if "kind: ranking" in line)
    path = tmp_path / "claims.yaml"
    path.write_text(text.replace(first, first.replace("kind: ranking,", "kind: ranking, margin: 1e-3,"), 1))
    with pytest.raises(InputError) as error:
        load_claims(path, ROOT / "workflow/schemas/claims.schema.yaml")
    problem = str(error.value).splitlines()[1]
    assert problem.endswith(".margin': '1e-3' is not of type 'number' (YAML reads 1e-3 as text: write it with a "
                            "point, e.g. 1.0e-3)"), problem
    path.write_text(text.replace(first, first.replace("kind: ranking,", "kind: rank,"), 1))
    with pytest.raises(InputError, match=r"\.kind': 'rank' is not allowed; allowed values: \['ranking', 'share', 'ratio'\]"):
        load_claims(path, ROOT / "workflow/schemas/claims.schema.yaml")


def test_a_claim_key_given_twice_is_refused_with_both_lines(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text((ROOT / "claims.yaml").read_text().replace("  level: 0.05", "  level: 0.05\n  level: 0.01", 1))
    with pytest.raises(InputError, match=r"claims\.yaml, line (\d+): key 'level' given twice \(first on line \d+\); keep one"):
        load_claims(path, ROOT / "workflow/schemas/claims.schema.yaml")
