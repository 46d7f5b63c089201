"""A claim's verdict from the result tables, decided by a test with a stated error rate.

A claim holds several tests; each test is one of three kinds, given as data (no expression of the
claims file is ever evaluated as code):

    ranking  group `lower` ends below group `higher` (+ `margin`, default 0) in `metric`: an exact
             one-sided rank test (src/rlstudy/core/statistics.py) of lower - margin < higher. Holds
             when p <= level, fails when the reverse one-sided test has p <= level, inconclusive
             otherwise. A positive margin makes it a non-inferiority test ("lower is at most
             `margin` above higher"), with the margin fixed in the claims file before any result.
    ratio    `numerator` ends below `at_most` times `denominator` (positive metrics): the same test
             on the logarithms, log numerator - log at_most < log denominator; at_most > 1 is a
             non-inferiority margin in ratio ("within 25 %": at_most 1.25).
    share    the share of rows whose `metric` is at_most / at_least a number or another column;
             with min_share 1 (every row) it fails on any counterexample and holds when every row
             passes; otherwise it holds or fails when the exact binomial 95 % interval is clear of
             min_share. A share describes the runs made; it tests no hypothesis about a population.

`paired: true` (rankings and ratios) pairs the two groups' rows by their `seed` column: runs that
share their initialisation (the same run seed of one setting and task: run_method's "init"
stream does not name the estimator or the dataset; the sweep's points of equal N) are compared by
the Wilcoxon signed-rank test on the paired differences; unpaired groups by the Mann-Whitney U
test. Both are exact at every n, so under the null a test holds with probability at most `level`
(checked by simulation in tests/unit/claims/test_error_rates.py); a sample too small for the
smallest attainable p-value to reach the level gives "inconclusive" by design, never "holds".
A test with fewer rows than its min_n in a group is inconclusive too. An undecided test (enough
rows, neither one-sided p at the level) says in its evidence how likely more seeds would decide
it: the plug-in power of core/statistics.power_to_decide at the `power.sizes` of the defaults.

Values may be inf (a run that diverged or never reached a bound: it ranks above every finite
value); NaN is refused. The claim holds when all its tests hold, fails when any fails, and is
inconclusive otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlstudy.agents.registry import AGENTS
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.core.errors import InputError
from rlstudy.core.statistics import SHARE_INTERVAL, compare, power_to_decide, share_interval
from rlstudy.offline.learners import DIAGNOSED

HOLDS, FAILS, INCONCLUSIVE = "holds", "fails", "inconclusive"


@dataclass(frozen=True)
class Outcome:
    verdict: str
    evidence: str
    seeds: str


def select(table: pd.DataFrame, where: dict, claim: str) -> pd.DataFrame:
    for column in where:
        if column not in table.columns:
            raise InputError(f"claim {claim!r}: no column {column!r} in its table (columns: {list(table.columns)})")
    mask = np.ones(len(table), dtype=bool)
    for column, value in where.items():
        mask &= (table[column] == value).to_numpy()
    return table[mask]


def values(rows: pd.DataFrame, metric: str, claim: str) -> np.ndarray:
    if metric not in rows.columns:
        raise InputError(f"claim {claim!r}: no column {metric!r} in its table (columns: {list(rows.columns)})")
    numbers = rows[metric].to_numpy(dtype=np.float64)
    if np.isnan(numbers).any():  # a NaN would quietly fail every comparison
        raise InputError(f"claim {claim!r}: column {metric!r} of its table holds NaN; rebuild the table")
    return numbers


def seeds_of(rows: pd.DataFrame, label: str) -> str:
    seeds = ",".join(str(s) for s in rows["seed"]) if "seed" in rows.columns else f"{len(rows)} rows"
    return f"{label}: {seeds or 'none'}"


def describe(where: dict) -> str:
    """A group's name: its text values as they are (UR, sgd), numbers with their column (kick=0.1)."""
    return " ".join(str(v) if isinstance(v, str) else f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}"
                    for k, v in where.items())


@dataclass(frozen=True)
class Groups:
    """The two groups a ranking or a ratio compares, each a `where` within the test's rows; paired
    groups are sorted by seed, row i of one with row i of the other."""

    first: np.ndarray
    second: np.ndarray
    names: tuple[str, str]
    seeds: str

    @classmethod
    def of(cls, test: dict, table: pd.DataFrame, claim: str, first: str, second: str) -> "Groups":
        base = select(table, test.get("where", {}), claim)
        rows = [select(base, test[key], claim) for key in (first, second)]
        if test.get("paired", False):
            rows = paired_rows(rows, claim)
        names = (describe(test[first]), describe(test[second]))
        return cls(values(rows[0], test["metric"], claim), values(rows[1], test["metric"], claim), names,
                   f"{seeds_of(rows[0], names[0])}; {seeds_of(rows[1], names[1])}")

    def too_few(self, minimum: int) -> bool:
        return min(len(self.first), len(self.second)) < minimum


def paired_rows(rows: list[pd.DataFrame], claim: str) -> list[pd.DataFrame]:
    """Both groups sorted by seed; they must hold the same seeds, each once (an empty group is left to
    min_n: e.g. a sweep point the smoke scale does not run)."""
    if any(len(group) == 0 for group in rows):
        return rows
    for group in rows:
        if "seed" not in group.columns:
            raise InputError(f"claim {claim!r}: a paired test needs a 'seed' column in its table")
        if group["seed"].duplicated().any():
            raise InputError(f"claim {claim!r}: a paired group holds a seed twice; narrow its 'where'")
    if set(rows[0]["seed"]) != set(rows[1]["seed"]):
        raise InputError(f"claim {claim!r}: paired groups of different seeds ({sorted(rows[0]['seed'])} vs "
                         f"{sorted(rows[1]['seed'])}); rebuild the table or drop 'paired'")
    return [group.sort_values("seed") for group in rows]


def rank_test(test: dict, groups: Groups, first: np.ndarray, second: np.ndarray, hypothesis: str) -> Outcome:
    """The verdict of the exact one-sided test of first < second, with its evidence."""
    level = test["level"]
    if groups.too_few(test["min_n"]):
        return Outcome(INCONCLUSIVE, f"{hypothesis}: {len(groups.first)} vs {len(groups.second)} rows, "
                       f"fewer than {test['min_n']}", groups.seeds)
    result = compare(first, second, paired=test.get("paired", False))
    medians = f"medians {np.median(groups.first):.3g} vs {np.median(groups.second):.3g}"
    evidence = (f"{hypothesis}: {result.test}, one-sided, level {level:g}, n = {result.n}: p = {result.p_below:.3g} "
                f"(reverse p = {result.p_above:.3g}); {medians}")
    decision = result.verdict(level)
    if decision == "too few":
        return Outcome(INCONCLUSIVE, f"{evidence}; the smallest attainable p is {result.smallest_p:.3g} > {level:g}: "
                       "too few runs to decide, by design", groups.seeds)
    if decision not in ("below", "above"):
        return Outcome(INCONCLUSIVE, f"{evidence}; neither one-sided p reaches {level:g}: the difference is not "
                       f"decided at n = {result.n}; {power_evidence(test, first, second)}", groups.seeds)
    return Outcome(HOLDS if decision == "below" else FAILS, evidence, groups.seeds)


def power_at_sizes(test: dict, first: np.ndarray, second: np.ndarray) -> dict[int, float]:
    """The plug-in power of the test at each of its `power.sizes` (core/statistics.power_to_decide),
    from its own seeded stream: the same numbers in an undecided test's evidence and in seed_power."""
    settings = test["power"]
    rng = np.random.default_rng(settings["seed"])
    return power_to_decide(first, second, test.get("paired", False), test["level"], settings["sizes"],
                           settings["draws"], rng)


def power_evidence(test: dict, first: np.ndarray, second: np.ndarray) -> str:
    """How likely more seeds would decide the test, if the seeds so far were the population."""
    settings = test["power"]
    paired = test.get("paired", False)
    power = power_at_sizes(test, first, second)
    unit = "pairs" if paired else "per group"
    at = ", ".join(f"{p:.2f} at {n}" for n, p in power.items())
    return (f"estimated power to decide at level {test['level']:g} ({settings['draws']} experiments of each size "
            f"resampled from these {'pairs' if paired else 'groups'}, normal approximations of the same test): "
            f"{at} {unit}")


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
        return Outcome(INCONCLUSIVE, f"{name}: {len(rows)} rows, fewer than {test['min_n']} ({detail})", seeds)
    point = float(passes.mean())
    minimum = test["min_share"]
    if minimum >= 1.0:
        verdict = HOLDS if passes.all() else FAILS
        return Outcome(verdict, f"{name} = {point:.2f} of {len(rows)} rows (needs every row; values {detail})", seeds)
    low, high = share_interval(int(passes.sum()), len(passes))
    verdict = HOLDS if low >= minimum else FAILS if high < minimum else INCONCLUSIVE
    return Outcome(verdict, f"{name} = {point:.2f} [{low:.2f}, {high:.2f}] ({SHARE_INTERVAL}), n = {len(rows)}, "
                   f"needs {minimum:g} (values {detail})", seeds)


KINDS = {"ranking": rank_verdict, "share": share, "ratio": rank_verdict}

# The values a column of the result tables can hold, whatever the config: a `where` naming another
# value (a typo such as `agent: qtabel`) is refused. A known value a table lacks (the authors'
# dataset without config `authors_data`, a task left out of config `tasks`) selects no row, and
# the test is inconclusive, as with too few seeds. Columns not listed (setting, env) take names
# from the config, so an absent value there cannot be told from a typo.
KNOWN_VALUES = {
    "dataset": {"ours", "authors"},
    "task": {"evaluation", "control"},
    "estimator": set(ESTIMATORS),  # the registries': a registered estimator, agent or learner is known
    "agent": set(AGENTS),
    "learner": set(DIAGNOSED),
}
GROUPS = ("lower", "higher", "numerator", "denominator")


def check_selection(table: pd.DataFrame, where: dict, claim: str, rows: str) -> None:
    """Refuse a `where` value that is neither in the table nor a value its column can hold."""
    for column, value in where.items():
        known = KNOWN_VALUES.get(column)
        if known is not None and value not in known and not (table[column] == value).any():
            raise InputError(f"claim {claim!r}: {column} = {value!r} selects none of {rows}, and {column} is one of "
                             f"{sorted(known)}; a typo?")


def check_where_types(table: pd.DataFrame, where: dict, claim: str, name: str) -> None:
    """Refuse a `where` value of another type than its column's: pandas compares `True == 1`, so
    `seed: true` selected seed 1's rows, and `seed: '1'` none."""
    for column, value in where.items():
        series = table[column]
        if pd.api.types.is_bool_dtype(series):
            fits, holds = isinstance(value, bool), "booleans (true, false)"
        elif pd.api.types.is_numeric_dtype(series):
            fits, holds = isinstance(value, (int, float)) and not isinstance(value, bool), "numbers"
        else:
            fits, holds = isinstance(value, str), "text"
        if not fits:
            raise InputError(f"claim {claim!r}: where {column} = {value!r} is a {type(value).__name__}, but column "
                             f"{column!r} of table {name!r} holds {holds}")


def check_test(test: dict, table: pd.DataFrame, claim: str) -> None:
    """A test's columns exist and its metrics are numbers; each `where` selects rows (check_selection)."""
    name = test["table"]
    metrics = [test["metric"], *(test[k] for k in ("at_most_column", "at_least_column") if k in test)]
    wheres = [test.get("where", {}), *(test[k] for k in GROUPS if k in test)]
    for column in [*metrics, *(c for where in wheres for c in where)]:
        if column not in table.columns:
            raise InputError(f"claim {claim!r}: no column {column!r} in table {name!r} (columns: {list(table.columns)})")
    for column in metrics:
        if not pd.api.types.is_numeric_dtype(table[column]):
            raise InputError(f"claim {claim!r}: metric {column!r} of table {name!r} is a text column, not a number")
    for where in wheres:
        check_where_types(table, where, claim, name)
    check_selection(table, wheres[0], claim, f"the rows of table {name!r}")
    base = select(table, wheres[0], claim)
    if not base.empty:
        for key in GROUPS:
            if key in test:
                check_selection(base, test[key], claim, f"the rows of table {name!r} where {wheres[0]} ({key!r})")


def combine(verdicts: list[str]) -> str:
    if any(v == FAILS for v in verdicts):
        return FAILS
    return HOLDS if verdicts and all(v == HOLDS for v in verdicts) else INCONCLUSIVE


def seed_power_columns(defaults: dict) -> list[str]:
    """The columns of seed_power's rows (a table of none keeps them)."""
    return ["id", "test", "hypothesis", "paired", "n_first", "n_second", "p", "reverse_p", "decided",
            *(f"power_at_{n}" for n in defaults["power"]["sizes"])]


def seed_power(claim: dict, tables: dict[str, pd.DataFrame], defaults: dict) -> list[dict]:
    """One row per rank test of the claim (ranking, ratio) whose table is given and whose groups
    have at least min_n rows: the run's seeds per group, its verdict's p-values and how likely
    experiments of each of `power.sizes` seeds would decide it (power_at_sizes), decided or not. What
    a seed count is chosen by: a count serves a test once its power there is high, and a test whose
    power stays low at the largest size is not one more seeds would decide."""
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
        power = power_at_sizes(test, compared.first, compared.second)
        rows.append({"id": claim["id"], "test": number, "hypothesis": compared.hypothesis,
                     "paired": bool(test.get("paired", False)), "n_first": len(compared.first),
                     "n_second": len(compared.second), "p": result.p_below, "reverse_p": result.p_above,
                     "decided": result.verdict(test["level"]) in ("below", "above"),
                     **{f"power_at_{n}": p for n, p in power.items()}})
    return rows


def evaluate(claim: dict, tables: dict[str, pd.DataFrame], defaults: dict) -> dict:
    """The claims.csv row of one claim."""
    outcomes = []
    for test in claim["tests"]:
        test = {**defaults, **test}
        if test["table"] not in tables:  # e.g. a by-hand evaluation of one study's tables
            outcomes.append(Outcome(INCONCLUSIVE, f"table {test['table']!r} not given", ""))
            continue
        check_test(test, tables[test["table"]], claim["id"])
        outcomes.append(KINDS[test["kind"]](test, tables[test["table"]], claim["id"]))
    verdict = combine([o.verdict for o in outcomes])
    return {"id": claim["id"], "source": claim["source"], "statement": claim["statement"], "verdict": verdict,
            "evidence": " | ".join(f"[{o.verdict}] {o.evidence}" for o in outcomes),
            "seeds": " | ".join(o.seeds for o in outcomes)}
