"""Seed counts planned from a stated smallest effect of interest, for the test each claim uses.

The effect is stated in claims.yaml (`defaults.planning`, or a test's own `effect`), never read from
the results: a paired test's effect is the probability that a pair's difference lies in the claimed
direction (the sign test's power depends on nothing else: computed exactly), an unpaired test's the
probability of superiority P(a run of one group ends below a run of the other) (the superiority
bound test's power simulated with two normal laws of equal spread, equal group sizes), a share test's the true
share of runs passing (exact binomial). The planned count is the smallest n at which the power
reaches `defaults.planning.power`; `python benchmarks/seed_plan.py` writes the table.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from rlstudy.core.bounded_mean import episodes_needed
from rlstudy.core.statistics import sign_test_power, unpaired_power as simulated_unpaired_power

# The unpaired sizes simulated (per group): a grid, so a plan costs a few seconds.
UNPAIRED_GRID = (5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 44, 48, 52, 56, 60,
                 70, 80, 90, 100, 120, 150, 200)


def share_power(n: int, true_share: float, min_share: float, level: float) -> float:
    """The exact power of the one-sided binomial test that the share passing exceeds min_share."""
    counts = np.arange(n + 1)
    critical = counts[stats.binom.sf(counts - 1, n, min_share) <= level]
    return float(stats.binom.sf(critical[0] - 1, n, true_share)) if len(critical) else 0.0


@lru_cache(maxsize=None)
def unpaired_power(n: int, superiority: float, level: float, draws: int, seed: int) -> float:
    return simulated_unpaired_power(n, n, superiority, level, draws, np.random.default_rng([seed, n]))


def kind_of(test: dict) -> str | None:
    """'paired', 'unpaired' or 'share' (a binomial share test); None: no seeds to plan (a
    description of the runs made, or a per-run test, decided by each run's own episodes)."""
    if test["kind"] in ("ranking", "ratio"):
        return "paired" if test.get("paired", False) else "unpaired"
    if test["kind"] == "share" and test.get("min_share", 1.0) < 1.0 and "run_noise" not in test:
        return "share"
    return None


def effect_of(test: dict, planning: dict) -> float | None:
    kind = kind_of(test)
    if kind is None:
        return None
    return float(test.get("effect", planning["share" if kind == "share" else "superiority"]))


def power_at(test: dict, n: int, planning: dict, level: float) -> float:
    """The power of the test's own decision rule at n seeds (pairs, per group, or runs)."""
    kind, effect = kind_of(test), effect_of(test, planning)
    if kind == "paired":
        return sign_test_power(n, effect, level)
    if kind == "unpaired":
        return unpaired_power(n, effect, level, planning["draws"], planning["seed"])
    if kind == "share":
        return share_power(n, effect, float(test["min_share"]), level)
    return math.nan


def planned_seeds(test: dict, planning: dict, level: float) -> int | None:
    """The smallest seed count whose power reaches planning['power'] (None: no seeds to plan, or more
    than planning['max_seeds'])."""
    kind = kind_of(test)
    if kind is None:
        return None
    sizes = UNPAIRED_GRID if kind == "unpaired" else range(2, planning["max_seeds"] + 1)
    for n in sizes:
        if n <= planning["max_seeds"] and power_at(test, n, planning, level) >= planning["power"]:
            return n
    return None


def effect_words(test: dict, planning: dict) -> str:
    kind, effect = kind_of(test), effect_of(test, planning)
    if kind is None:
        return ""
    return {"paired": f"P(a pair's difference in the claimed direction) = {effect:g}",
            "unpaired": f"P(a run of the first group ends below one of the second) = {effect:g}",
            "share": f"a true share of {effect:g} of runs passing"}.get(kind, "")


def claim_power(planning: dict, tests: int) -> dict:
    """The planning with the power each of a claim's `tests` tests must reach for the claim to reach
    planning['power'] by intersection-union (independent tests: power^(1/tests); 0.8 over two tests asks
    0.894 of each, where two tests at 0.8 give the claim 0.64)."""
    return {**planning, "power": planning["power"] ** (1.0 / max(1, tests))}


def seed_lists_of(test: dict) -> list[str]:
    """The config's seed lists (confirmatory_block.counts keys) a test's rows come from."""
    wheres = [test.get("where", {}), *(test[k] for k in ("lower", "higher", "numerator", "denominator") if k in test)]
    found: list[str] = []
    for group in wheres[1:] or [{}]:
        where = {**wheres[0], **group}
        if test["table"] in ("summary", "cost"):
            setting = where.get("setting")
            lists = ([f"seeds.{where['task']}"] if "task" in where else ["seeds.evaluation", "seeds.control"]) \
                if setting in (None, "sgd") else [f"cbo.settings.{setting}.seeds"]
            found += lists if setting is not None else [*lists, "cbo.settings.cbo-adaptive.seeds"]
        elif test["table"] == "sweep":
            found.append("cbo_sweep.seeds")
        elif test["table"] == "agents":
            found += [f"{where['agent']}.seeds"] if "agent" in where else []
        elif test["table"] == "offline":
            found.append("offline.seeds")
    return list(dict.fromkeys(found))


def holm_counted(claim: dict, defaults: dict) -> bool:
    """A claim Holm counts: confirmatory (neither a `description` nor `carried` from an earlier protocol)
    with a p-value (a rank, binomial share or per-run test; a description of the runs made has none)."""
    inferential = any(kind_of({**defaults, **t}) or "run_noise" in t for t in claim["tests"])
    return inferential and not {"description", "carried"} & set(claim)


def planned_levels(claims: dict, study: bool) -> dict[str, float]:
    """The level each tested claim is planned at: Holm's smallest, level / (its family's tested claims),
    or with `study` level / (every tested claim of the study)."""
    defaults = claims["defaults"]
    counted = [claim for claim in claims["claims"] if holm_counted(claim, defaults)]
    family_size: dict[str, int] = {}
    for claim in counted:
        family_size[claim["family"]] = family_size.get(claim["family"], 0) + 1
    return {claim["id"]: defaults["level"] / (len(counted) if study else family_size[claim["family"]])
            for claim in counted}


def planned_max_counts(claims: dict, study: bool = False) -> dict[str, int | None]:
    """Per seed list, the largest count any tested confirmatory claim reading it needs for power
    planning['power'] at its smallest effect of interest, at the level it is tested at (Holm's smallest
    in its family, or over the study with `study`), intersection-union included; None: more than
    planning['max_seeds'] (that claim is underpowered at any count the plan allows). A per-run test
    plans episodes, not seeds (per_run_episodes)."""
    defaults = claims["defaults"]
    planning = defaults["planning"]
    levels = planned_levels(claims, study)
    counts: dict[str, int | None] = {}
    for claim in claims["claims"]:
        tests = [{**defaults, **t} for t in claim["tests"] if kind_of({**defaults, **t})]
        if claim["id"] not in levels or not tests:
            continue
        each = claim_power(planning, len(tests))
        for test in tests:
            seeds = planned_seeds(test, each, levels[claim["id"]])
            for name in seed_lists_of(test):
                known = counts.get(name, 0)
                counts[name] = None if seeds is None or known is None else max(known, seeds)
    return counts


def per_run_episodes(claims: dict, bars: dict[str, float], study: bool = False) -> dict[str, int | None]:
    """Per per-run claim whose bar is a known number (`bars`: agent -> its config solved_return), the
    fewest evaluation episodes that decide it at its planned level: every episode at the top of the
    range (any noise asks for more)."""
    levels = planned_levels(claims, study)
    needs: dict[str, int | None] = {}
    for claim in claims["claims"]:
        for test in claim["tests"]:
            agent = test.get("where", {}).get("agent")
            if "run_noise" not in test or agent not in bars or claim["id"] not in levels:
                continue
            for low, high in test["run_noise"]["range"].values():
                needs[claim["id"]] = episodes_needed((bars[agent] - low) / (high - low), levels[claim["id"]])
    return needs
