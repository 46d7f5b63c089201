"""The group-sequential looks (core/looks.py: the state the looks made give, read back as data;
claims/looks.py: a look's decisions) on small hand-made designs and tables."""

import json
import math

import pandas as pd
import pytest

from rlstudy.claims.looks import (AT_MAXIMUM, FAILED, HOLDS, OPEN, apply_looks, decide, lists_rows, planned_tests,
                                  read_claims_file, study_p_values)
from rlstudy.claims.rules import decide as decide_claims
from rlstudy.core.config import ConfigError
from rlstudy.core.errors import InputError
from rlstudy.core.looks import LIST_COLUMNS, look_state, locked_design, run_looks

from looks_fixtures import CLAIMS, DEFAULTS, LISTS, PLAN

PAIRED = {"claim": "a-below-b", "test": 1, "kind": "paired", "lists": ["x.seeds"], "level": 0.25, "power": 0.8,
          "effect": 0.75, "maximum": 6}
SHARE = {"claim": "c-passes", "test": 1, "kind": "share", "lists": ["y.seeds"], "level": 0.25, "power": 0.8,
         "effect": 0.99, "maximum": 4}
DESIGN = {"looks": 2, "spending": "pocock", "lists": {"x.seeds": {"maximum": 6, "looks": [3, 6]},
                                                      "y.seeds": {"maximum": 4, "looks": [2, 4]}},
          "tests": [PAIRED, SHARE]}


def table(a_minus_b: float, seeds=range(100, 106)):
    rows = [{"g": "a", "seed": s, "v": a_minus_b} for s in seeds] + [{"g": "b", "seed": s, "v": 0.0} for s in seeds]
    return pd.DataFrame(rows + [{"g": "c", "seed": s, "v": -1.0} for s in seeds])


def test_a_paired_claim_holds_or_fails_at_its_first_boundary_and_a_fixed_one_waits_for_its_maximum():
    held = {r["claim"]: r for r in decide(1, DESIGN, LISTS, PLAN, CLAIMS, {"t": table(-1.0)}, {})}
    assert held["a-below-b"]["claim_status"] == HOLDS and held["a-below-b"]["n"] == 3
    assert held["a-below-b"]["p"] == pytest.approx(0.125)  # 3 of 3 pairs; Pocock's first boundary 0.125
    assert held["c-passes"]["claim_status"] == OPEN and math.isnan(held["c-passes"]["p"])
    failed = {r["claim"]: r for r in decide(1, DESIGN, LISTS, PLAN, CLAIMS, {"t": table(+1.0)}, {})}
    assert failed["a-below-b"]["claim_status"] == FAILED  # the mirror boundary on the reverse p
    rows = list(held.values())
    lists = {r["list"]: r for r in lists_rows(1, rows, LISTS, {"x.seeds": 3, "y.seeds": 2})}
    assert (lists["x.seeds"]["status"], lists["x.seeds"]["next_count"]) == ("stop", 3)
    assert (lists["y.seeds"]["status"], lists["y.seeds"]["next_count"]) == ("continue", 4)
    before = {(r["claim"], r["test"]): {k: str(v) for k, v in r.items()} for r in rows}
    last = {r["claim"]: r for r in decide(2, DESIGN, LISTS, PLAN, CLAIMS, {"t": table(+1.0)}, before)}
    assert last["a-below-b"]["claim_status"] == HOLDS  # decided at look 1: not tested again on other data
    assert last["c-passes"]["claim_status"] == HOLDS and last["c-passes"]["n"] == 4  # 4 of 4: p = 0.0625
    undecided = decide(2, DESIGN, LISTS, PLAN, CLAIMS, {"t": table(-1.0).assign(v=lambda f: f["v"].abs())}, before)
    assert {r["claim"]: r["claim_status"] for r in undecided}["c-passes"] == FAILED  # 0 of 4 pass: reverse p
    verdicts = apply_looks(pd.DataFrame({"id": ["a-below-b", "other"], "verdict": ["inconclusive"] * 2,
                                         "evidence": ["e", "f"]}), {("a-below-b", 1): {**before[("a-below-b", 1)]}})
    assert verdicts["verdict"].tolist() == ["holds", "inconclusive"]
    assert verdicts["evidence"][0].startswith("[group-sequential design: holds at look 1")
    assert AT_MAXIMUM not in verdicts["verdict"].tolist()


def write_lists(root, look, rows):
    folder = root / f"look{look}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lists.csv").write_text(",".join(LIST_COLUMNS) + "\n" + "".join(f"{row}\n" for row in rows))


def test_the_looks_made_give_the_seeds_of_the_look_in_progress(tmp_path):
    assert look_state(LISTS, tmp_path).current == 1
    write_lists(tmp_path, 1, ["x.seeds,1,3,stop,3", "y.seeds,1,2,continue,4"])
    state = look_state(LISTS, tmp_path)
    assert (state.current, state.counts) == (2, {"x.seeds": 3, "y.seeds": 4})
    write_lists(tmp_path, 2, ["x.seeds,2,3,stop,3", "y.seeds,2,4,stop,4"])
    state = look_state(LISTS, tmp_path)
    assert (state.current, state.made, state.last) == (None, 2, 2)


@pytest.mark.parametrize("rows, words", [
    (["x.seeds,1,3.5,stop,3", "y.seeds,1,2,continue,4"], "count '3.5' is not a count"),
    (["z.seeds,1,3,stop,3", "y.seeds,1,2,continue,4"], "list 'z.seeds' is not a seed list of the design"),
    (["x.seeds,1,3,stop,3"], "no row for the design's lists ['y.seeds']"),
    (["x.seeds,1,3,continue,5", "y.seeds,1,2,continue,4"], "is not a step of the design"),
    (["x.seeds,1,6,stop,6", "y.seeds,1,2,continue,4"], "at count 6, but the looks before give it 3"),
])
def test_a_hostile_look_file_is_one_line_naming_it(tmp_path, rows, words):
    write_lists(tmp_path, 1, rows)
    with pytest.raises(ConfigError, match="look1/lists.csv") as raised:
        look_state(LISTS, tmp_path)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_a_stopped_list_stays_stopped(tmp_path):
    write_lists(tmp_path, 1, ["x.seeds,1,3,stop,3", "y.seeds,1,2,continue,4"])
    write_lists(tmp_path, 2, ["x.seeds,2,3,continue,6", "y.seeds,2,4,stop,4"])
    with pytest.raises(ConfigError, match="a stopped list stays stopped"):
        look_state(LISTS, tmp_path)


def test_no_design_runs_outside_the_confirmatory_block_of_a_lock_with_one(tmp_path):
    lock = tmp_path / "protocol.lock"
    lock.write_text(json.dumps({"seed_plan": PLAN, "design": DESIGN}))
    config = {"seed_block": "exploratory", "x": {"seeds": [0, 1]}, "confirmatory_block": {"start": "protocol"}}
    assert run_looks(config, lock, tmp_path) is None and config["x"]["seeds"] == [0, 1]
    config = {"seed_block": "confirmatory", "x": {"seeds": PLAN["x.seeds"]}, "y": {"seeds": PLAN["y.seeds"]},
              "confirmatory_block": {"start": "protocol"}}
    state = run_looks(config, lock, tmp_path)
    assert state.current == 1 and config["x"]["seeds"] == [100, 101, 102] and config["y"]["seeds"] == [100, 101]
    lock.write_text(json.dumps({"seed_plan": PLAN, "design": {**DESIGN, "tests": [{**PAIRED, "lists": ["q.seeds"]}]}}))
    with pytest.raises(ConfigError, match="is not a planned test"):
        locked_design(lock)


def test_a_test_decided_at_a_later_look_carries_its_stage_wise_p_values():
    t = table(-1.0)
    t.loc[(t["g"] == "a") & (t["seed"] == 101), "v"] = 1.0  # 2 of 3 pairs below at look 1, 5 of 6 at look 2
    first = decide(1, DESIGN, LISTS, PLAN, CLAIMS, {"t": t}, {})
    before = {(r["claim"], r["test"]): {k: str(v) for k, v in r.items()} for r in first}
    paired = {r["claim"]: r for r in decide(2, DESIGN, LISTS, PLAN, CLAIMS, {"t": t}, before)}["a-below-b"]
    assert paired["test_status"] == HOLDS and paired["p"] == pytest.approx(7 / 64)  # fixed: P0(S6 >= 5)
    # Pocock at 0.25 holds at 3 of 3 (1/8) at look 1: p = 1/8 + P0(S3 = 2) P0(3 of 3) = 1/8 + 3/8 x 1/8 = 11/64;
    # reverse (1 of 6 above): 1/8 + P0(R3 <= 2, R6 >= 1) = 1/8 + 7/8 - 1/64 = 63/64.
    assert (paired["sequential_p"], paired["sequential_reverse_p"]) == pytest.approx((11 / 64, 63 / 64))
    share = {r["claim"]: r for r in decide(2, DESIGN, LISTS, PLAN, CLAIMS, {"t": t}, before)}["c-passes"]
    assert share["sequential_p"] == share["p"] == pytest.approx(1 / 16)  # tested once, at its maximum


def test_the_study_wide_holm_takes_the_sequential_p_values_of_the_claims_the_design_decided():
    rows = {("a", 1): {"test_status": HOLDS, "sequential_p": "0.01", "sequential_reverse_p": "0.9"},
            ("a", 2): {"test_status": HOLDS, "sequential_p": "0.03", "sequential_reverse_p": "0.4"},
            ("b", 1): {"test_status": OPEN, "sequential_p": "0.001", "sequential_reverse_p": "0.001"}}
    found = study_p_values(rows)
    assert found["a"] == pytest.approx((0.03, 0.8)) and found["b"] == (1.0, 1.0)  # open: never decides
    data = pd.DataFrame([{"g": g, "seed": s, "v": v} for s in range(8) for g, v in (("x", -1.0), ("y", 0.0))])
    test = {"kind": "ranking", "table": "t", "metric": "v", "lower": {"g": "x"}, "higher": {"g": "y"}, "paired": True}
    claims = [{"id": i, "source": "", "statement": "", "family": i, "tests": [test]} for i in ("a", "b")]
    fixed = decide_claims(claims, {"t": data}, DEFAULTS)
    sequential = decide_claims(claims, {"t": data}, DEFAULTS, {"a": (0.03, 0.8)})
    assert [r["p_study"] for r in fixed] == pytest.approx([2 / 256] * 2)  # 8 of 8 pairs, Holm over 2
    assert [r["p_study"] for r in sequential] == pytest.approx([0.03, 2 / 256])
    assert [r["study_verdict"] for r in sequential] == ["holds", "holds"]
    assert [r["p_adjusted"] for r in sequential] == [r["p_adjusted"] for r in fixed]  # families: unchanged


def test_a_look_s_claims_file_read_back_is_checked(tmp_path):
    rows = decide(1, DESIGN, LISTS, PLAN, CLAIMS, {"t": table(-1.0)}, {})
    path = tmp_path / "claims.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert set(read_claims_file(path, planned_tests(DESIGN, LISTS))) == {("a-below-b", 1), ("c-passes", 1)}
    for column, values, message in (("test_status", ["maybe", "open"], "statuses 'maybe'"),
                                    ("sequential_p", ["0.5", "1.5"], "sequential_p '1.5': expected a p-value"),
                                    ("p", ["x", "0.5"], "p 'x': expected a p-value"),
                                    ("hold_boundary", ["inf", "0.1"], "hold_boundary 'inf': expected a boundary"),
                                    ("n", ["3", "-2"], "n '-2': expected a count")):
        pd.DataFrame(rows).assign(**{column: values}).to_csv(path, index=False)
        with pytest.raises(InputError, match=message):
            read_claims_file(path)
    pd.DataFrame(rows).drop(columns=["sequential_p", "sequential_reverse_p"]).to_csv(path, index=False)
    with pytest.raises(InputError, match="without the sequential p-values is refused"):
        read_claims_file(path)
    pd.DataFrame(rows[:1]).to_csv(path, index=False)
    with pytest.raises(InputError, match="its tests are not the design's"):
        read_claims_file(path, planned_tests(DESIGN, LISTS))


def test_the_offline_evaluation_runs_the_episodes_its_comment_computes():
    """config.yaml's offline.evaluation_episodes and its comment: a BCQ run 25 above a bar of 275 with an
    episode sd of 100 on CartPole's [0, 500] decides at the study's smallest Holm level from 396."""
    from pathlib import Path

    import yaml

    from rlstudy.claims.planning import planned_levels
    from rlstudy.core.bounded_mean import episodes_needed

    root = Path(__file__).resolve().parents[3]
    claims = yaml.safe_load((root / "claims.yaml").read_text())
    level = planned_levels(claims, study=True)["bcq-at-least-buffer"]
    assert level == min(planned_levels(claims, study=True).values())
    need = episodes_needed(275 / 500, level, mean_fraction=300 / 500, variance_fraction=(100 / 500) ** 2)
    text = (root / "config.yaml").read_text()
    assert need == 396 and "from 396 (core/bounded_mean.episodes_needed)" in " ".join(text.split())
    assert yaml.safe_load(text)["offline"]["evaluation_episodes"] >= need
