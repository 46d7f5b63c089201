"""A claim's verdict from the result tables, with the uncertainty its seeds allow.

A claim holds several tests; each test is one of three kinds, given as data (no expression of the
claims file is ever evaluated as code):

    ranking  P(a seed of group `lower` ends below a seed of group `higher`) in `metric`, over all
             pairs; holds when its 95 % bootstrap interval lies above 1/2, fails when below.
    share    the share of rows whose `metric` is at_most / at_least a number or another column;
             with min_share 1 (every row) it fails on any counterexample and holds when every row
             passes; otherwise it holds or fails when the bootstrap interval is clear of min_share.
    ratio    mean(metric over `numerator`) / mean(metric over `denominator`); holds when the
             interval lies at or under `at_most`, fails when above it.

A test with fewer rows than its min_n (in any group) is inconclusive, whatever its point value.
The claim holds when all its tests hold, fails when any fails, and is inconclusive otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlstudy.core.errors import InputError
from rlstudy.core.statistics import (
    bootstrap_two_groups,
    percentile_interval,
    probability_of_lower,
    ratio_of_means,
)

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
    if not np.isfinite(numbers).all():  # a NaN would quietly fail every comparison
        raise InputError(f"claim {claim!r}: column {metric!r} of its table holds NaN or inf; rebuild the table")
    return numbers


def seeds_of(rows: pd.DataFrame, label: str) -> str:
    seeds = ",".join(str(s) for s in rows["seed"]) if "seed" in rows.columns else f"{len(rows)} rows"
    return f"{label}: {seeds or 'none'}"


def describe(where: dict) -> str:
    return " ".join(str(v) for v in where.values())


@dataclass(frozen=True)
class Groups:
    """The two groups a ranking or a ratio compares, each a `where` within the test's rows."""

    first: np.ndarray
    second: np.ndarray
    names: tuple[str, str]
    seeds: str

    @classmethod
    def of(cls, test: dict, table: pd.DataFrame, claim: str, first: str, second: str) -> "Groups":
        base = select(table, test.get("where", {}), claim)
        rows = [select(base, test[key], claim) for key in (first, second)]
        names = (describe(test[first]), describe(test[second]))
        return cls(values(rows[0], test["metric"], claim), values(rows[1], test["metric"], claim), names,
                   f"{seeds_of(rows[0], names[0])}; {seeds_of(rows[1], names[1])}")

    def too_few(self, minimum: int) -> bool:
        return min(len(self.first), len(self.second)) < minimum

    def sizes(self) -> str:
        return f"{len(self.first)} vs {len(self.second)}"


def two_group_test(test: dict, table: pd.DataFrame, claim: str, rng, resamples: int, keys: tuple[str, str],
                   statistic, name: str, verdict_of, digits: str) -> Outcome:
    """A statistic of two groups, its bootstrap interval, and the verdict verdict_of(low, high)."""
    groups = Groups.of(test, table, claim, *keys)
    name = name.format(first=groups.names[0], second=groups.names[1], metric=test["metric"])
    if groups.too_few(test["min_n"]):
        return Outcome(INCONCLUSIVE, f"{name}: {groups.sizes()} rows, fewer than {test['min_n']}", groups.seeds)
    point = float(statistic(groups.first, groups.second))
    low, high = bootstrap_two_groups(groups.first, groups.second, statistic, rng, resamples)
    return Outcome(verdict_of(low, high), f"{name} = {point:{digits}} [{low:{digits}}, {high:{digits}}], "
                   f"n = {groups.sizes()}", groups.seeds)


def ranking(test: dict, table: pd.DataFrame, claim: str, rng, resamples: int) -> Outcome:
    return two_group_test(test, table, claim, rng, resamples, ("lower", "higher"), probability_of_lower,
                          "P({first} < {second}) in {metric}",
                          lambda low, high: HOLDS if low > 0.5 else FAILS if high < 0.5 else INCONCLUSIVE, ".2f")


def share(test: dict, table: pd.DataFrame, claim: str, rng, resamples: int) -> Outcome:
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
        return Outcome(verdict, f"{name} = {point:.2f} (needs every row; values {detail})", seeds)
    draws = passes[rng.integers(len(passes), size=(resamples, len(passes)))].mean(axis=1)
    ci_low, ci_high = percentile_interval(draws)
    verdict = HOLDS if ci_low >= minimum else FAILS if ci_high < minimum else INCONCLUSIVE
    return Outcome(verdict, f"{name} = {point:.2f} [{ci_low:.2f}, {ci_high:.2f}], needs {minimum:g} (values {detail})",
                   seeds)


def ratio(test: dict, table: pd.DataFrame, claim: str, rng, resamples: int) -> Outcome:
    bound = test["at_most"]
    return two_group_test(test, table, claim, rng, resamples, ("numerator", "denominator"), ratio_of_means,
                          f"mean {{metric}} of {{first}} / of {{second}} (needs <= {bound:g})",
                          lambda low, high: HOLDS if high <= bound else FAILS if low > bound else INCONCLUSIVE, ".3g")


KINDS = {"ranking": ranking, "share": share, "ratio": ratio}

# The values a column of the result tables can hold, whatever the config: a `where` naming another
# value (a typo such as `agent: qtabel`) is refused. A known value a table lacks (the authors'
# dataset without config `authors_data`, a task left out of config `tasks`) selects no row, and
# the test is inconclusive, as with too few seeds. Columns not listed (optimizer, env) take names
# from the config, so an absent value there cannot be told from a typo.
KNOWN_VALUES = {
    "dataset": {"ours", "authors"},
    "task": {"evaluation", "control"},
    "method": {"DS", "UR", "BFF", "BFF-matched"},
    "agent": {"qtable", "linear_q", "dqn", "ddpg", "mpo"},
    "learner": {"behavioural", "bcq", "dqn"},
}
GROUPS = ("lower", "higher", "numerator", "denominator")


def check_selection(table: pd.DataFrame, where: dict, claim: str, rows: str) -> None:
    """Refuse a `where` value that is neither in the table nor a value its column can hold."""
    for column, value in where.items():
        known = KNOWN_VALUES.get(column)
        if known is not None and value not in known and not (table[column] == value).any():
            raise InputError(f"claim {claim!r}: {column} = {value!r} selects none of {rows}, and {column} is one of "
                             f"{sorted(known)}; a typo?")


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


def evaluate(claim: dict, tables: dict[str, pd.DataFrame], rng_of, resamples: int, defaults: dict) -> dict:
    """The claims.csv row of one claim; rng_of(index) gives the generator of its index-th test."""
    outcomes = []
    for index, test in enumerate(claim["tests"]):
        test = {**defaults, **test}
        if test["table"] not in tables:  # e.g. a by-hand evaluation of one study's tables
            outcomes.append(Outcome(INCONCLUSIVE, f"table {test['table']!r} not given", ""))
            continue
        check_test(test, tables[test["table"]], claim["id"])
        outcomes.append(KINDS[test["kind"]](test, tables[test["table"]], claim["id"], rng_of(index), resamples))
    verdict = combine([o.verdict for o in outcomes])
    return {"id": claim["id"], "source": claim["source"], "statement": claim["statement"], "verdict": verdict,
            "evidence": " | ".join(f"[{o.verdict}] {o.evidence}" for o in outcomes),
            "seeds": " | ".join(o.seeds for o in outcomes)}
