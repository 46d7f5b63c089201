"""Which rows of a result table a claim's test reads: its `where` selections, checked against the
table's columns, types and the values a column can hold (a typo selects nothing and is refused), and
the groups a ranking or a ratio compares (paired by seed where the runs share their initialisation)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlstudy.agents.registry import AGENTS
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.core.errors import InputError
from rlstudy.offline.learners import DIAGNOSED


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


def too_few_words(counts: list[int], minimum: int, values: str = "") -> str:
    """'3 vs 4 rows, fewer than 5 (values)'; groups with no rows at all in words: the run made none of them (a
    dataset or setting it was not given)."""
    if not any(counts):
        return f"no rows: this run made none of these runs (a test needs at least {minimum})"
    return " vs ".join(map(str, counts)) + f" rows, fewer than {minimum}" + (f" ({values})" if values else "")


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
