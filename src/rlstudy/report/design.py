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

A seed list's maximum is the largest any test reading it needs; its looks are K equal steps to it. The
maximum's cost is counted in job-minutes per seed (config `confirmatory_block.design.job_minutes`, the
mean job wall of one seed of each list measured in docs/speed.md); where the lists together exceed the
budget, each list's maximum is cut in proportion and every claim reading a cut list is planned as
underpowered, in words, before the data.

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


def protocol_design(claims: dict, config: dict) -> dict:
    """The design protocol.lock fixes (the module's docstring)."""
    settings = (config.get(CONFIRMATORY_KEY) or {}).get("design") or {}
    looks, spending = settings.get("looks", 4), settings.get("spending", "obrien-fleming")
    costs, budget = settings.get("job_minutes") or {}, settings.get("budget_job_minutes")
    plans = test_plans(claims, config, looks, spending)
    maximum: dict[str, int] = {}
    for plan in plans:
        for key in plan["lists"]:
            maximum[key] = max(maximum.get(key, 0), plan["maximum"] or claims["defaults"]["planning"]["max_seeds"])
    cost = sum(maximum[key] * costs.get(key, 0.0) for key in maximum)
    share = min(1.0, budget / cost) if budget and cost else 1.0
    lists = {key: {"maximum": max(looks, math.floor(count * share)), "needed": count,
                   "looks": look_counts(max(looks, math.floor(count * share)), looks), "job_minutes": costs.get(key, 0.0)}
             for key, count in sorted(maximum.items())}
    for plan in plans:
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
            "budget_job_minutes": budget, "job_minutes_at_maximum": round(cost, 1), "lists": lists, "tests": plans}
