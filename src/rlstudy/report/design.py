"""The confirmatory block's group-sequential design, fixed in protocol.lock before any of its data.

Each claim's tests are planned at the level the claim is tested at (its family's Holm level for the
first claim: level / the family's tested claims), each test of a claim at power^(1/m) so that the claim's
intersection-union (all m tests must hold) keeps the planned power; a claim carried from an earlier
protocol's publication (claims.yaml `carried`) is not tested again: it has no plan and is not counted in
its family; the smallest effect of interest is
claims.yaml's (`defaults.planning`). A paired test is the sign test: its design is exact
(core/sequential.py: K looks, O'Brien-Fleming-type or Pocock-type alpha spending, a non-binding futility
bound from beta spending). Any other test gets the fixed planned count (`planned_count`) as its maximum
and is tested once, there: a fixed design (core/sequential.simulated_design sets boundaries on any test's
p-values by simulation, for a protocol that fixes them).

A seed list's needed maximum is the largest any test reading it needs; its looks are K equal steps to the
maximum it is planned at. A maximum's cost is counted in job-minutes per seed (config
`confirmatory_block.design.job_minutes`, one seed of each list, measured by benchmarks/seed_costs.py) against
`budget_job_minutes`. The budget funds whole claims, cheapest first: every list starts at its floor of K
seeds (one per look), then, repeatedly, the claim whose needed counts (each list its tests read raised to the
largest count a test of the claim needs there) cost the least on top of the counts already planned is funded
(ties by claim id), while the total fits the budget. A funded claim is planned at its full power; a claim no
count up to planning.max_seeds powers is never funded. What is left of the budget is spread over the lists of
the claims not funded, each list's shortfall (to the largest count an unfunded claim needs there) cut in the
same proportion and rounded down. So the planned total never exceeds the budget, unless the floors of K seeds
alone do (then the lists stay at K). Without a budget every list is planned at its needed maximum. Every test
of a claim not funded whose lists fall short of its maximum is planned as underpowered, in words, before
the data; the design records per test whether its claim is funded, and the funded claims in the order funded.

How the looks run and decide (a test holds, fails, stops for futility or stays open; a seed list continues
while a claim that reads it is open, up to its maximum): core/looks.py and claims/looks.py.
"""

from __future__ import annotations

import math

from rlstudy.claims.planning import effect_of, kind_of, planned_seeds
from rlstudy.claims.rules import CARRIED, role_of
from rlstudy.core.seed_blocks import CONFIRMATORY_KEY, seed_lists
from rlstudy.core.sequential import look_counts, sign_test_power, smallest_binomial_design

AGENT_TABLES = ("agents",)


def _groups(test: dict) -> list[dict]:
    """The row filters of a test's groups: `where` with each side (a ranking's `lower` and `higher`, a ratio's
    `numerator` and `denominator`), or `where` alone."""
    where = test.get("where") or {}
    sides = [test[side] for side in ("lower", "higher", "numerator", "denominator") if isinstance(test.get(side), dict)]
    return [{**where, **side} for side in sides] or [where]


def lists_read(test: dict, lists: list[str], config: dict) -> list[str]:
    """The replicate seed lists whose runs a test's rows come from (none: a test of references)."""
    table = test.get("table")
    found: set[str] = set()
    for group in _groups(test):
        if table in ("summary", "cost"):
            settings = [group["setting"]] if "setting" in group else ["sgd", *(config.get("cbo", {}).get("settings") or {})]
            tasks = [group["task"]] if "task" in group else list(config.get("tasks") or [])
            for setting in settings:
                if setting == "sgd":
                    found |= {key for key in lists if key in {f"seeds.{task}" for task in tasks} | {"seeds"}}
                else:
                    found |= {key for key in lists if key == f"cbo.settings.{setting}.seeds"}
        elif table == "sweep":
            found |= {key for key in lists if key == "cbo_sweep.seeds"}
        elif table in AGENT_TABLES:
            agents = [group["agent"]] if "agent" in group else [key.split(".")[0] for key in lists
                                                                 if "solved_return" in config.get(key.split(".")[0], {})]
            found |= {f"{agent}.seeds" for agent in agents if f"{agent}.seeds" in lists}
        elif table == "offline":
            found |= {key for key in lists if key == "offline.seeds"}
    return sorted(found)


def planned_count(test: dict, planning: dict, level: float, power: float) -> int | None:
    """The fixed design's seed count at this level and power (claims/planning.py's planner)."""
    return planned_seeds(test, {**planning, "power": power}, level)


def tested_claims(claims: dict) -> list[dict]:
    """The claims this protocol tests: all but those carried from an earlier protocol's publication."""
    return [claim for claim in claims["claims"] if role_of(claim) != CARRIED]


def _family_sizes(claims: dict) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for claim in tested_claims(claims):
        tested = any(kind_of({**claims["defaults"], **test}) for test in claim["tests"])
        sizes[claim["family"]] = sizes.get(claim["family"], 0) + tested
    return sizes


def test_plans(claims: dict, config: dict, looks: int, spending: str) -> list[dict]:
    """One plan per planned test of a tested claim (a carried one has none): its claim, lists, level,
    power, maximum and (a sign test) boundaries."""
    defaults, planning = claims["defaults"], claims["defaults"]["planning"]
    lists, sizes, plans = list(seed_lists(config)), _family_sizes(claims), []
    for claim in tested_claims(claims):
        tests = [{**defaults, **test} for test in claim["tests"]]
        planned = [test for test in tests if kind_of(test)]
        for number, test in enumerate(tests, start=1):
            if not kind_of(test):
                continue
            level = test["level"] / max(1, sizes[claim["family"]])
            power = planning["power"] ** (1 / len(planned))
            plan = {"claim": claim["id"], "test": number, "kind": kind_of(test), "lists": lists_read(test, lists, config),
                    "level": level, "power": round(power, 6), "effect": effect_of(test, planning)}
            if plan["kind"] == "paired":
                design = smallest_binomial_design(level, plan["effect"], power, looks, spending,
                                                  limit=planning["max_seeds"])
                plan |= {"maximum": design.counts[-1] if design else None,
                         "boundaries": design.as_dict() if design else None}
            else:
                plan |= {"maximum": planned_count(test, planning, level, power), "boundaries": "none: tested once, at the maximum"}
            plans.append(plan)
    return plans


def claim_needs(plans: list[dict], max_seeds: int) -> dict[str, dict[str, int]]:
    """Per claim, the count it needs of each list its tests read: the largest maximum of its tests reading it
    (planning.max_seeds for a test no count powers)."""
    needs: dict[str, dict[str, int]] = {}
    for plan in plans:
        need = needs.setdefault(plan["claim"], {})
        for key in plan["lists"]:
            need[key] = max(need.get(key, 0), plan["maximum"] or max_seeds)
    return needs


def _job_minutes(counts: dict[str, int], costs: dict[str, float]) -> float:
    return sum(count * costs.get(key, 0.0) for key, count in counts.items())


def _shortfall(need: dict[str, int], counts: dict[str, int]) -> dict[str, int]:
    return {key: need[key] - counts[key] for key in need if need[key] > counts[key]}


def fund_claims(needs: dict[str, dict[str, int]], fundable: list[str], floor: dict[str, int],
                costs: dict[str, float], budget: float) -> tuple[list[str], dict[str, int]]:
    """The claims the budget funds whole, cheapest extra cost first (ties by claim id), in the order funded,
    and the counts they raise the lists to from their floor."""
    counts, funded, waiting = dict(floor), [], sorted(fundable)
    while waiting:
        extra, claim = min((_job_minutes(_shortfall(needs[claim], counts), costs), claim) for claim in waiting)
        if _job_minutes(counts, costs) + extra > budget:
            break
        funded.append(claim)
        waiting.remove(claim)
        counts |= {key: max(counts[key], count) for key, count in needs[claim].items()}
    return funded, counts


def spread_rest(needs: dict[str, dict[str, int]], unfunded: list[str], counts: dict[str, int],
                costs: dict[str, float], budget: float) -> dict[str, int]:
    """The counts after spreading what is left of the budget over the unfunded claims' lists: each list's
    shortfall to the largest count an unfunded claim needs there, all cut in one proportion, rounded down."""
    short: dict[str, int] = {}
    for claim in unfunded:
        for key, count in _shortfall(needs[claim], counts).items():
            short[key] = max(short.get(key, 0), count)
    wanted, left = _job_minutes(short, costs), max(0.0, budget - _job_minutes(counts, costs))
    share = min(1.0, left / wanted) if wanted else 1.0
    return counts | {key: counts[key] + math.floor(count * share) for key, count in short.items()}


def protocol_design(claims: dict, config: dict) -> dict:
    """The design protocol.lock fixes (the module's docstring)."""
    settings = (config.get(CONFIRMATORY_KEY) or {}).get("design") or {}
    looks, spending = settings.get("looks", 4), settings.get("spending", "obrien-fleming")
    costs, budget = settings.get("job_minutes") or {}, settings.get("budget_job_minutes")
    plans = test_plans(claims, config, looks, spending)
    needs = claim_needs(plans, claims["defaults"]["planning"]["max_seeds"])
    needed: dict[str, int] = {}
    for need in needs.values():
        needed |= {key: max(needed.get(key, 0), count) for key, count in need.items()}
    fundable = sorted({plan["claim"] for plan in plans} - {plan["claim"] for plan in plans if plan["maximum"] is None})
    funded, counts = fund_claims(needs, fundable, {key: looks for key in needed}, costs, budget or math.inf)
    unfunded = sorted(set(needs) - set(funded))
    counts = spread_rest(needs, unfunded, counts, costs, budget or math.inf)
    lists = {key: {"maximum": counts[key], "needed": count, "looks": look_counts(counts[key], looks),
                   "job_minutes": costs.get(key, 0.0)} for key, count in sorted(needed.items())}
    for plan in plans:
        plan["funded"] = plan["claim"] in funded
        cut = [key for key in plan["lists"] if lists[key]["maximum"] < (plan["maximum"] or math.inf)]
        if plan["maximum"] is None:
            plan["underpowered"] = "no count up to planning.max_seeds reaches the power: planned as underpowered"
        elif cut:
            afford = min(lists[key]["maximum"] for key in cut)
            at = (f"; the sign test's power there is {sign_test_power(afford, plan['level'], plan['effect']):.2f}"
                  if plan["kind"] == "paired" else "")
            plan["underpowered"] = (f"planned as underpowered: the budget affords {afford} seeds of {', '.join(cut)}, "
                                    f"its power {plan['power']:.2f} needs {plan['maximum']}{at}")
    return {"looks": looks, "spending": spending, "futility": "non-binding, beta spending of the same type",
            "budget_job_minutes": budget, "job_minutes_at_maximum": round(_job_minutes(needed, costs), 1),
            "job_minutes_planned": round(_job_minutes(counts, costs), 1), "funded": funded,
            "lists": lists, "tests": plans}
