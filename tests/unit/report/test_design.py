"""The protocol's group-sequential design (report/design.py): each planned test's maximum at its Holm
level and intersection-union power, the lists it reads, the exact sign-test boundaries, and a claim the
budget cannot afford planned as underpowered, in words, before the data; the budget funds whole claims,
cheapest first, and spreads the rest over the lists of the claims it does not fund."""

import copy
from pathlib import Path

import yaml

from rlstudy.core.sequential import smallest_binomial_design
from rlstudy.report.design import fund_claims, lists_read, protocol_design, spread_rest
from rlstudy.report.design import test_plans as plans_of  # (a name pytest does not collect)

ROOT = Path(__file__).resolve().parents[3]
CLAIMS = yaml.safe_load((ROOT / "claims.yaml").read_text())
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())
JOB_MINUTES = 1.6  # one seed of seeds.control, set here: the config's is measured and moves
LISTS = ["seeds.evaluation", "seeds.control", "cbo.settings.cbo.seeds", "cbo.settings.cbo-adaptive.seeds",
         "cbo_sweep.seeds", "mpo.seeds", "ddpg.seeds", "qtable.seeds", "linear_q.seeds", "dqn.seeds", "offline.seeds"]


def claims_of(*ids: str, carried: bool = False) -> dict:
    """The named claims of claims.yaml; as tested claims (their `carried` mark dropped) unless `carried`."""
    chosen = [claim for claim in CLAIMS["claims"] if claim["id"] in ids]
    if not carried:
        chosen = [{key: value for key, value in claim.items() if key != "carried"} for claim in chosen]
    return {**CLAIMS, "claims": chosen}


def test_each_test_reads_the_lists_its_rows_come_from():
    by_id = {claim["id"]: claim for claim in CLAIMS["claims"]}
    first = lambda claim: by_id[claim]["tests"][0]  # noqa: E731
    assert lists_read(first("ds-worse-control-qstar"), LISTS, CONFIG) == ["seeds.control"]
    assert lists_read(first("mpo-as-good-as-ddpg"), LISTS, CONFIG) == ["ddpg.seeds", "mpo.seeds"]
    assert lists_read(first("offline-dqn-below-bcq"), LISTS, CONFIG) == ["offline.seeds"]
    assert lists_read(first("sweep-strong-selection"), LISTS, CONFIG) == ["cbo_sweep.seeds"]
    assert lists_read(first("cost-cbo-adaptive-sooner-control"), LISTS, CONFIG) == [
        "cbo.settings.cbo-adaptive.seeds", "seeds.control"]
    assert lists_read(first("authors-qstar-close-to-exact"), LISTS, CONFIG) == []  # a reference: no seeds
    # a ratio's sides are its numerator and denominator: SGD's and cbo-adaptive's lists, not every setting's
    assert lists_read(first("cbo-adaptive-reaches-sgd-on-control"), LISTS, CONFIG) == [
        "cbo.settings.cbo-adaptive.seeds", "seeds.control"]


def test_a_paired_claim_is_planned_at_its_holm_level_and_intersection_union_power():
    claims = claims_of("ds-worse-control-qstar", "ds-worse-control-exact")  # one family, two claims of two tests
    config = copy.deepcopy(CONFIG)
    config["confirmatory_block"]["design"].update(budget_job_minutes=10_000, job_minutes={"seeds.control": JOB_MINUTES})
    design = protocol_design(claims, config)
    plan = design["tests"][0]
    assert plan["level"] == CLAIMS["defaults"]["level"] / 2 and plan["power"] == round(0.8 ** 0.5, 6)
    exact = smallest_binomial_design(plan["level"], 0.75, 0.8 ** 0.5, 4)
    assert plan["boundaries"] == exact.as_dict() and plan["maximum"] == exact.counts[-1]
    assert design["lists"] == {"seeds.control": {"maximum": exact.counts[-1], "needed": exact.counts[-1],
                                                 "looks": list(exact.counts), "job_minutes": JOB_MINUTES}}
    assert not any("underpowered" in plan for plan in design["tests"])


def test_a_claim_the_budget_cannot_afford_is_planned_as_underpowered_in_words():
    claims = claims_of("ds-worse-control-qstar")
    config = copy.deepcopy(CONFIG)
    config["confirmatory_block"]["design"].update(budget_job_minutes=20, job_minutes={"seeds.control": JOB_MINUTES})
    design = protocol_design(claims, config)
    assert design["lists"]["seeds.control"]["maximum"] == 12  # 20 job-minutes buy 12 seeds of 1.6
    words = design["tests"][0]["underpowered"]
    assert words.startswith("planned as underpowered: the budget affords 12 seeds of seeds.control")
    assert "the sign test's power there is" in words


def test_the_budget_funds_the_cheap_claim_whole_and_spreads_the_rest_over_the_dear_one():
    needs = {"cheap": {"a": 10}, "dear": {"a": 20, "b": 30}}
    costs, floor = {"a": 1.0, "b": 2.0}, {"a": 4, "b": 4}
    # floors 4 x 1 + 4 x 2 = 12; cheap adds (10 - 4) x 1 = 6: 18 <= 60, funded; dear would add
    # (20 - 10) x 1 + (30 - 4) x 2 = 62: 80 > 60, not funded. The 42 left over dear's shortfall
    # (10 of a, 26 of b: 62 job-minutes) is a share of 42/62: a 10 + floor(6.77) = 16, b 4 + floor(17.6) = 21
    funded, counts = fund_claims(needs, ["cheap", "dear"], floor, costs, 60)
    assert funded == ["cheap"] and counts == {"a": 10, "b": 4}
    assert spread_rest(needs, ["dear"], counts, costs, 60) == {"a": 16, "b": 21}  # 16 + 42 = 58 <= 60


def test_the_budget_is_never_exceeded_but_by_the_floors_and_a_funded_claim_keeps_its_needs():
    needs = {"one": {"a": 9}, "two": {"a": 25, "b": 12}, "three": {"b": 40, "c": 7}, "four": {"c": 50}}
    costs, floor = {"a": 1.5, "b": 0.7, "c": 3.0}, {"a": 4, "b": 4, "c": 4}
    spent = lambda counts: sum(counts[key] * costs[key] for key in counts)  # noqa: E731
    seen = set()
    for budget in range(0, 260, 3):
        funded, counts = fund_claims(needs, sorted(needs), floor, costs, budget)
        final = spread_rest(needs, sorted(set(needs) - set(funded)), counts, costs, budget)
        seen.add(len(funded))
        assert spent(final) <= max(budget, spent(floor)) + 1e-9
        assert all(final[key] >= floor[key] and final[key] >= counts[key] for key in floor)
        assert all(final[key] >= count for claim in funded for key, count in needs[claim].items())
    assert seen == {0, 1, 2, 3, 4}  # the budgets run from the floors alone to every claim funded


def test_a_tie_in_cost_funds_the_claim_first_by_id():
    needs = {"b-claim": {"a": 10}, "a-claim": {"b": 10}}
    funded, counts = fund_claims(needs, ["b-claim", "a-claim"], {"a": 4, "b": 4}, {"a": 1.0, "b": 1.0}, 15)
    assert funded == ["a-claim"] and counts == {"a": 4, "b": 10}


def test_the_protocol_design_funds_the_cheaper_claim_at_its_full_maximum_and_plans_the_other_underpowered():
    claims = claims_of("linear-q-as-good-as-qtable", "mpo-as-good-as-ddpg")
    config = copy.deepcopy(CONFIG)
    minutes = {"linear_q.seeds": 2.0, "qtable.seeds": 2.0, "mpo.seeds": 1.0, "ddpg.seeds": 1.0}
    config["confirmatory_block"]["design"].update(budget_job_minutes=10_000, job_minutes=minutes)
    needed = {key: item["needed"] for key, item in protocol_design(claims, config)["lists"].items()}
    # floors 4 seeds of each list (24 job-minutes); mpo against ddpg, the cheaper claim (1 a seed of each list),
    # funded whole; half of linear_q's and qtable's shortfall left over: each list half way from 4 to its need
    budget = 24 + (needed["mpo.seeds"] - 4) + (needed["ddpg.seeds"] - 4) + (needed["linear_q.seeds"] - 4) * 2
    config["confirmatory_block"]["design"]["budget_job_minutes"] = budget
    design = protocol_design(claims, config)
    assert design["funded"] == ["mpo-as-good-as-ddpg"]
    assert design["lists"]["mpo.seeds"]["maximum"] == needed["mpo.seeds"]
    assert design["lists"]["ddpg.seeds"]["maximum"] == needed["ddpg.seeds"]
    afford = 4 + (needed["linear_q.seeds"] - 4) // 2
    assert design["lists"]["linear_q.seeds"]["maximum"] == design["lists"]["qtable.seeds"]["maximum"] == afford
    assert design["job_minutes_planned"] <= budget
    by_claim = {plan["claim"]: plan for plan in design["tests"]}
    assert by_claim["mpo-as-good-as-ddpg"]["funded"] and "underpowered" not in by_claim["mpo-as-good-as-ddpg"]
    assert not by_claim["linear-q-as-good-as-qtable"]["funded"]
    assert by_claim["linear-q-as-good-as-qtable"]["underpowered"].startswith(
        f"planned as underpowered: the budget affords {afford} seeds of linear_q.seeds, qtable.seeds")


def test_looks_stop_a_claim_at_its_boundary_and_a_list_once_no_open_claim_reads_it():
    from scipy import stats

    from rlstudy.core.sequential import binomial_design, look_counts, p_boundaries
    from rlstudy.claims.looks import FUTILE, HOLDS, OPEN, claim_status, lists_to_continue, test_status

    design = binomial_design(look_counts(33, 4), 0.025, 0.75)
    bounds = p_boundaries(design)
    p_of = lambda s, n: float(stats.binom.sf(s - 1, n, 0.5))  # noqa: E731 (the exact sign test's p)
    for k, (n, a, b) in enumerate(zip(design.counts, design.efficacy, design.futility)):
        if a <= n:  # O'Brien-Fleming's first look (9 pairs) cannot hold: a = 10
            assert test_status(bounds, k, p_of(a, n)) == HOLDS and test_status(bounds, k, p_of(a - 1, n)) != HOLDS
        else:
            assert test_status(bounds, k, 0.0) == OPEN
        if b >= 0:
            assert test_status(bounds, k, p_of(b, n)) == FUTILE and test_status(bounds, k, p_of(b + 1, n)) != FUTILE
    assert test_status(bounds, 3, 0.9, before=HOLDS) == HOLDS  # a test that held is not tested again
    assert claim_status([HOLDS, OPEN]) == OPEN and claim_status([HOLDS, HOLDS]) == HOLDS
    assert claim_status([HOLDS, FUTILE]) == FUTILE
    reads = {"a": ["seeds.control"], "b": ["seeds.control", "cbo_sweep.seeds"], "c": ["mpo.seeds"]}
    assert lists_to_continue(reads, {"a": HOLDS, "b": OPEN, "c": FUTILE}) == ["cbo_sweep.seeds", "seeds.control"]
    assert lists_to_continue(reads, {"a": HOLDS, "b": FUTILE, "c": FUTILE}) == []


def test_a_carried_claim_is_not_planned_nor_counted_in_its_family():
    """ds-worse-control-qstar is carried from protocol 1 (claims.yaml): no plan of its own, and the tested
    claim of its family is planned at the level of a family of one, as if it did not exist."""
    both = claims_of("ds-worse-control-qstar", "ds-greedy-worse-control", carried=True)
    assert "carried" in both["claims"][0] or "carried" in both["claims"][1]
    plans = plans_of(both, CONFIG, 4, "obrien-fleming")
    assert {plan["claim"] for plan in plans} == {"ds-greedy-worse-control"}
    assert plans == plans_of(claims_of("ds-greedy-worse-control"), CONFIG, 4, "obrien-fleming")
    assert all(plan["level"] == CLAIMS["defaults"]["level"] for plan in plans)
    tested = plans_of(claims_of("ds-worse-control-qstar", "ds-greedy-worse-control"), CONFIG, 4, "obrien-fleming")
    assert all(plan["level"] == CLAIMS["defaults"]["level"] / 2 for plan in tested)  # were it tested: Holm over 2


def test_the_shipped_design_plans_no_carried_claim():
    """The looks test only what the design plans (claims/looks.py): no claim claims.yaml marks carried."""
    carried = {claim["id"] for claim in CLAIMS["claims"] if "carried" in claim}
    plans = plans_of(CLAIMS, CONFIG, 4, "obrien-fleming")
    assert carried and plans and not carried & {plan["claim"] for plan in plans}
