"""A claim's verdict from the result tables, decided by tests whose error rates are stated.

Each claim states its `estimand` (what its tests are about) and belongs to a `family` (claims.yaml);
each test is one of three kinds, given as data (no expression of the claims file is ever evaluated
as code):

    ranking  group `lower` ends below group `higher` (+ `margin`, default 0) in `metric`. Paired
             (`paired: true`): the exact sign test of the paired differences, estimand the median
             paired difference lower - margin - higher < 0. Unpaired: the superiority bound test
             (core/superiority.py), estimand P(a run of lower - margin ends below a run of higher) > 1/2 (ties count half).
             A positive margin makes it a non-inferiority test, the margin fixed in the claims file.
    ratio    `numerator` ends below `at_most` times `denominator` (positive metrics): the same tests
             on the logarithms: the median paired ratio is below at_most, or P(a numerator run ends
             below at_most x a denominator run) > 1/2.
    share    the runs whose `metric` is at_most / at_least a number or another column. Three forms:
             `min_share` 1 (the default): a description of the runs made ("every run made"), no
             inference and no p-value; `min_share` < 1: the exact one-sided binomial test that the
             share of runs passing exceeds min_share (estimand: the probability that a run passes);
             `run_noise`: every run's expected value (over its evaluation episodes) passes, each run
             by the bounded-mean betting test of its episodes against the bar (claims/per_run.py,
             valid for every law on the environment's return range), combined by
             intersection-union. A `cap` refuses a bar at the environment's cap (a run can only
             meet it, never beat it): inconclusive by design.

Every test gives the one-sided p-value of its claimed direction (p) and of the reverse (reverse p);
core/statistics.py documents each test and core/calibration.py measures its false-positive rate.
A sample too small for the smallest attainable p to reach the level, or fewer rows than min_n, gives
"inconclusive" by design. Values may be inf (a diverged run ranks above every finite value); NaN
is refused.

A claim (`decide`): intersection-union over its inferential tests, p = the largest p (the claim
holds only if every test holds at the level: its false-holds rate is at most the level) and
reverse p = the smallest reverse p times the number of tests (Bonferroni: its false-fails rate is at
most the level); a descriptive test must hold too, and one that fails fails the claim. Within each
family the claims' p and reverse p are Holm-adjusted (each side separately), and the claim holds
when its adjusted p is at most the level, fails when its adjusted reverse p is, and is inconclusive
otherwise: the family-wise rate of false holds (and of false fails) is at most the level. A claim
of descriptive tests only has no p and is decided by its runs. The study's error: every confirmatory
claim's p and reverse p are also Holm-adjusted together across all families (p_study, study_verdict):
the chance of any false holds (or of any false fails) anywhere in the study is at most the level. A
claim marked `description` in claims.yaml (its value moves with no replicate seed: a reference Q*, a
population minimiser) is a description, outside both procedures and the confirmatory count; so is a
claim marked `carried` (it keeps an earlier protocol's published verdict, claims/publication.py). An
undecided test says how many seeds its planned effect needs (claims/planning.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlstudy.claims.per_run import TEST_WORDS, per_run_p_values
from rlstudy.claims.planning import effect_words, kind_of, planned_seeds, power_at
from rlstudy.claims.selection import Groups, check_test, describe, seeds_of, select, too_few_words, values
from rlstudy.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, Carried
from rlstudy.core.errors import InputError
from rlstudy.core.statistics import compare, holm, share_test_p_values


@dataclass(frozen=True)
class Outcome:
    """A test's verdict at its level (before the family's adjustment), its evidence, its seeds and its
    one-sided p-values (NaN: a description of the runs made, with no inference)."""

    verdict: str
    evidence: str
    seeds: str
    p: float = 1.0
    reverse_p: float = 1.0

    @property
    def descriptive(self) -> bool:
        return math.isnan(self.p)


def undecided_note(test: dict, n: int) -> str:
    """How many seeds the test's planned effect needs (claims/planning.py), beside an undecided test."""
    planning, level = test["planning"], test["level"]
    seeds = planned_seeds(test, planning, level)
    needs = f"{seeds}" if seeds else f"more than {planning['max_seeds']}"
    unit = {"paired": "pairs", "unpaired": "runs per group"}.get(kind_of(test), "runs")
    return (f"planned: {needs} {unit} give power {planning['power']:g} at the stated effect "
            f"({effect_words(test, planning)}), power {power_at(test, n, planning, level):.2f} at the {n} here")


def rank_test(test: dict, groups: Groups, first: np.ndarray, second: np.ndarray, hypothesis: str) -> Outcome:
    """The verdict of the one-sided test of first < second (core/statistics.compare), with its evidence."""
    level = test["level"]
    paired = test.get("paired", False)
    if groups.too_few(test["min_n"]):
        counts = [len(groups.first), len(groups.second)]
        return Outcome(INCONCLUSIVE, f"{hypothesis}: {too_few_words(counts, test['min_n'])}", groups.seeds)
    result = compare(first, second, paired=paired)
    medians = f"medians {np.median(groups.first):.3g} vs {np.median(groups.second):.3g}"
    evidence = (f"{hypothesis}: {result.test}, one-sided, level {level:g}, n = {result.n}: p = {result.p_below:.3g} "
                f"(reverse p = {result.p_above:.3g}); {medians}")
    decision = result.verdict(level)
    n = len(first) if paired else min(len(first), len(second))
    if decision == "too few":
        return Outcome(INCONCLUSIVE, f"{evidence}; the smallest attainable p is {result.smallest_p:.3g} > {level:g}: "
                       f"too few runs to decide, by design; {undecided_note(test, n)}", groups.seeds)
    if decision not in ("below", "above"):
        return Outcome(INCONCLUSIVE, f"{evidence}; neither one-sided p reaches {level:g}: not decided at n = "
                       f"{result.n}; {undecided_note(test, n)}", groups.seeds, result.p_below, result.p_above)
    return Outcome(HOLDS if decision == "below" else FAILS, evidence, groups.seeds, result.p_below, result.p_above)


@dataclass(frozen=True)
class Compared:
    """What a rank test compares: its groups, the values it ranks (first shifted by the margin, or
    both as logarithms) and the hypothesis first < second in words."""

    groups: Groups
    first: np.ndarray
    second: np.ndarray
    hypothesis: str


def ranking_values(test: dict, table: pd.DataFrame, claim: str) -> Compared:
    groups = Groups.of(test, table, claim, "lower", "higher")
    margin = float(test.get("margin", 0.0))
    shifted = f" + {margin:g}" if margin else ""
    hypothesis = f"{groups.names[0]} < {groups.names[1]}{shifted} in {test['metric']}"
    return Compared(groups, groups.first - margin, groups.second, hypothesis)


def ratio_values(test: dict, table: pd.DataFrame, claim: str) -> Compared:
    groups = Groups.of(test, table, claim, "numerator", "denominator")
    bound = float(test["at_most"])
    if (groups.first <= 0).any() or (groups.second <= 0).any():
        raise InputError(f"claim {claim!r}: a ratio test needs positive values of {test['metric']!r}")
    hypothesis = f"{groups.names[0]} < {bound:g} x {groups.names[1]} in {test['metric']} (test on logarithms)"
    return Compared(groups, np.log(groups.first) - math.log(bound), np.log(groups.second), hypothesis)


RANK_KINDS = {"ranking": ranking_values, "ratio": ratio_values}  # the kinds decided by a rank test


def rank_verdict(test: dict, table: pd.DataFrame, claim: str) -> Outcome:
    """A ranking's or a ratio's outcome: the rank test of its compared values."""
    compared = RANK_KINDS[test["kind"]](test, table, claim)
    return rank_test(test, compared.groups, compared.first, compared.second, compared.hypothesis)


def share(test: dict, table: pd.DataFrame, claim: str) -> Outcome:
    rows = select(table, test.get("where", {}), claim)
    metric = values(rows, test["metric"], claim)
    if "at_most" in test or "at_least" in test:
        bound_name = f"{test.get('at_most', test.get('at_least')):g}"
        bound = np.full(len(rows), float(test.get("at_most", test.get("at_least"))))
    else:
        column = test.get("at_most_column", test.get("at_least_column"))
        bound_name, bound = column, values(rows, column, claim)
    at_most = "at_most" in test or "at_most_column" in test
    passes = (metric <= bound) if at_most else (metric >= bound)
    name = f"share of {describe(test.get('where', {})) or 'rows'} with {test['metric']} {'<=' if at_most else '>='} {bound_name}"
    seeds = seeds_of(rows, describe(test.get("where", {})) or "rows")
    detail = ", ".join(f"{v:.4g}" for v in metric)
    if len(rows) == 0 or (len(rows) < test["min_n"] and passes.all()):
        return Outcome(INCONCLUSIVE, f"{name}: {too_few_words([len(rows)], test['min_n'], detail)}", seeds)
    if "cap" in test and (bound >= test["cap"]).any():
        return Outcome(INCONCLUSIVE, f"{name}: a bar ({', '.join(f'{v:.4g}' for v in bound)}) sits at the "
                       f"environment's cap {test['cap']:g}, where a run can meet it but never beat it: not "
                       f"testable, by design (values {detail})", seeds)
    point = float(passes.mean())
    level = test["level"]
    if "run_noise" in test:
        p_pass, p_fail, episodes = per_run_p_values(test, rows, metric, bound, at_most, claim)
        p, reverse = float(p_pass.max()), float(min(1.0, len(rows) * p_fail.min()))
        verdict = HOLDS if p <= level else FAILS if reverse <= level else INCONCLUSIVE
        return Outcome(verdict, f"{name}: every run's expected value, {TEST_WORDS} (intersection-union), level "
                       f"{level:g}: p = {p:.3g} (largest of {len(rows)} runs), reverse p = {reverse:.3g} (smallest x "
                       f"{len(rows)}); the runs pass as measured {point:.2f} (values {detail}; {episodes})", seeds,
                       p, reverse)
    minimum = test["min_share"]
    if minimum >= 1.0:
        verdict = HOLDS if passes.all() else FAILS
        return Outcome(verdict, f"{name} = {point:.2f} of {len(rows)} rows (a description of the runs made: needs "
                       f"every row; values {detail})", seeds, math.nan, math.nan)
    p, reverse = share_test_p_values(int(passes.sum()), len(passes), minimum)
    verdict = HOLDS if p <= level else FAILS if reverse <= level else INCONCLUSIVE
    evidence = (f"{name} = {point:.2f} of {len(rows)} rows; exact one-sided binomial test that the share "
                f"exceeds {minimum:g}, level {level:g}: p = {p:.3g} (reverse p = {reverse:.3g}) (values {detail})")
    if verdict == INCONCLUSIVE:
        evidence += f"; {undecided_note(test, len(rows))}"
    return Outcome(verdict, evidence, seeds, p, reverse)


KINDS = {"ranking": rank_verdict, "share": share, "ratio": rank_verdict}

def seed_power_columns(defaults: dict) -> list[str]:
    """The columns of seed_power's rows (a table of none keeps them)."""
    return ["id", "test", "hypothesis", "paired", "n_first", "n_second", "p", "reverse_p", "decided", "effect",
            "planned_seeds", *(f"power_at_{n}" for n in defaults["planning"]["sizes"])]


def seed_power(claim: dict, tables: dict[str, pd.DataFrame], defaults: dict) -> list[dict]:
    """One row per rank test of the claim (ranking, ratio) whose table is given and whose groups
    have at least min_n rows: the seeds it ran on, its p-values, and the power of its test at the
    stated effect (claims/planning.py: planned before the results, not estimated from them) at each
    of `planning.sizes` seeds, with the count its effect needs."""
    rows = []
    for number, test in enumerate(claim["tests"], start=1):
        test = {**defaults, **test}
        if test["kind"] not in RANK_KINDS or test["table"] not in tables:
            continue
        check_test(test, tables[test["table"]], claim["id"])
        compared = RANK_KINDS[test["kind"]](test, tables[test["table"]], claim["id"])
        if compared.groups.too_few(test["min_n"]):
            continue
        result = compare(compared.first, compared.second, paired=test.get("paired", False))
        planning = test["planning"]
        rows.append({"id": claim["id"], "test": number, "hypothesis": compared.hypothesis,
                     "paired": bool(test.get("paired", False)), "n_first": len(compared.first),
                     "n_second": len(compared.second), "p": result.p_below, "reverse_p": result.p_above,
                     "decided": result.verdict(test["level"]) in ("below", "above"),
                     "effect": effect_words(test, planning),
                     "planned_seeds": planned_seeds(test, planning, test["level"]),
                     **{f"power_at_{n}": power_at(test, n, planning, test["level"]) for n in planning["sizes"]}})
    return rows


def test_outcomes(claim: dict, tables: dict[str, pd.DataFrame], defaults: dict) -> list[Outcome]:
    outcomes = []
    for test in claim["tests"]:
        test = {**defaults, **test}
        if test["table"] not in tables:  # e.g. a by-hand evaluation of one study's tables
            outcomes.append(Outcome(INCONCLUSIVE, f"table {test['table']!r} not given", ""))
            continue
        check_test(test, tables[test["table"]], claim["id"])
        outcomes.append(KINDS[test["kind"]](test, tables[test["table"]], claim["id"]))
    return outcomes


def claim_p_values(outcomes: list[Outcome]) -> tuple[float, float]:
    """Intersection-union: p = the largest p of the inferential tests, reverse p = the smallest reverse
    p times their number (Bonferroni); NaN when every test describes the runs made."""
    tested = [o for o in outcomes if not o.descriptive]
    if not tested:
        return math.nan, math.nan
    return max(o.p for o in tested), min(1.0, len(tested) * min(o.reverse_p for o in tested))


def combine(outcomes: list[Outcome], p: float, reverse: float, level: float) -> str:
    """A claim's verdict from its (adjusted) p-values and its descriptive tests."""
    described = [o.verdict for o in outcomes if o.descriptive]
    if FAILS in described or (not math.isnan(reverse) and reverse <= level):
        return FAILS
    if not outcomes or any(v != HOLDS for v in described):
        return INCONCLUSIVE
    if math.isnan(p):
        return HOLDS
    return HOLDS if p <= level else INCONCLUSIVE


def family_of(claim: dict) -> str:
    """The claim's family (claims.yaml requires one; a hand-made claim without is a family of its own)."""
    return claim.get("family", f"claim {claim['id']}")


DESCRIPTION, CONFIRMATORY, CARRIED = "description", "confirmatory", "carried"


def role_of(claim: dict) -> str:
    """'carried': a claim that keeps an earlier protocol's published verdict (claims.yaml `carried`:
    claims/publication.py), not tested again; 'description': a claim about a quantity no replicate seed
    moves (claims.yaml `description`: one Q* per task, a population minimiser); both published apart
    and outside both Holm procedures; 'confirmatory' otherwise."""
    if "carried" in claim:
        return CARRIED
    return DESCRIPTION if "description" in claim else CONFIRMATORY


def row(claim: dict, outcomes: list[Outcome], adjusted: tuple[float, float], study: tuple[float, float],
        defaults: dict, carried: Carried | None = None) -> dict:
    """The claims.csv row; a carried claim's verdicts are the carried one, and its evidence says what this
    run's data show, decided by nothing."""
    p, reverse = claim_p_values(outcomes)
    evidence = " | ".join(f"[{o.verdict}] {o.evidence}" for o in outcomes)
    verdicts = (combine(outcomes, adjusted[0], adjusted[1], defaults["level"]),
                combine(outcomes, study[0], study[1], defaults["level"]))
    carried_from = ""
    if role_of(claim) == CARRIED:
        verdicts = (carried.verdict,) * 2
        carried_from = f"protocol {carried.protocol}, commit {carried.commit}"
        evidence = f"[carried from {carried.source}] this run's data, not tested again: {evidence}"
    return {"id": claim["id"], "source": claim["source"], "statement": claim["statement"],
            "estimand": claim.get("estimand", ""), "family": family_of(claim), "role": role_of(claim),
            "verdict": verdicts[0], "study_verdict": verdicts[1],
            "p": p, "p_adjusted": adjusted[0], "reverse_p": reverse, "reverse_p_adjusted": adjusted[1],
            "p_study": study[0], "reverse_p_study": study[1], "evidence": evidence,
            "seeds": " | ".join(o.seeds for o in outcomes), "carried_from": carried_from}


def evaluate(claim: dict, tables: dict[str, pd.DataFrame], defaults: dict) -> dict:
    """The claims.csv row of one claim alone (a family and a study of one: no adjustment; a carried claim,
    whose verdict is not given here, is refused)."""
    return decide([claim], tables, defaults)[0]


def holm_within(raw: list[tuple[float, float]], members: list[int]) -> dict[int, tuple[float, float]]:
    """The members' p and reverse p, each side Holm-adjusted among the members (NaN stays NaN)."""
    sides = [holm([raw[i][side] for i in members]) for side in (0, 1)]
    return {i: (sides[0][k], sides[1][k]) for k, i in enumerate(members)}


def decide(claims: list[dict], tables: dict[str, pd.DataFrame], defaults: dict,
           study_p: dict[str, tuple[float, float]] | None = None,
           carried: dict[str, Carried] | None = None) -> list[dict]:
    """Every claim's claims.csv row: its p-values Holm-adjusted within its family and, for the study,
    among every confirmatory claim of the file (each side apart); a description or a carried claim
    (`carried`: claim id -> the verdict it keeps, claims/publication.carried_verdicts) is adjusted in neither.
    `study_p`: a claim's p and reverse p for the study-wide Holm in place of its fixed tests' (the
    sequential p-values of a claim a group-sequential design decided: claims/looks.study_p_values)."""
    missing = [claim["id"] for claim in claims if role_of(claim) == CARRIED
               and claim["id"] not in (carried or {})]
    if missing:
        raise InputError(f"claim {missing[0]!r} is carried, but no carried verdict was given for it")
    outcomes = [test_outcomes(claim, tables, defaults) for claim in claims]
    raw = [claim_p_values(o) for o in outcomes]
    tested = [i for i, claim in enumerate(claims) if role_of(claim) == CONFIRMATORY]
    family, study = dict(enumerate(raw)), dict(enumerate(raw))
    for name in dict.fromkeys(family_of(claims[i]) for i in tested):
        family.update(holm_within(raw, [i for i in tested if family_of(claims[i]) == name]))
    studied = [(study_p or {}).get(claim["id"], raw[i]) for i, claim in enumerate(claims)]
    study.update(holm_within(studied, tested))
    return [row(claim, outcomes[i], family[i], study[i], defaults, (carried or {}).get(claim["id"]))
            for i, claim in enumerate(claims)]
