"""A look's decisions under the confirmatory block's group-sequential design (core/looks.py runs the looks;
the design is protocol.lock's `design`, written by report/design.py).

Each planned test of the design has its own looks: K equal steps (core/sequential.look_counts) to its
maximum, the smaller of its planned maximum and its seed lists' maxima; at look k it reads the first m_k
seeds of its lists (those lie among the n_k the look ran: m_k <= n_k).

- A paired test (the exact sign test) has exact boundaries at its own counts (core/sequential.
  binomial_design from the locked level, effect, power and spending): it holds when its p-value reaches
  the hold boundary, fails when its reverse p-value reaches the fail boundary (the sign test's null is
  symmetric, so that is the hold boundary of the same design at level / m for a claim of m planned
  tests: Bonferroni over the tests, as claims.csv's reverse p), stops for futility when its p-value
  reaches the non-binding futility bound, and is open otherwise. At the last look the futility bound
  meets the hold boundary: every test is decided there.
- Any other test (unpaired, share) is tested once, at the last look, on its maximum, at its level (its
  reverse p at level / m): a fixed design; it is open before, and undecided at its maximum otherwise.

A test decided stays decided. A claim holds once every planned test has held, fails once one has failed,
stops once one has stopped (for futility, or undecided at its maximum), and is open otherwise
(`claim_status`). A seed list continues while an open claim reads it (`lists_to_continue`).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

import pandas as pd

from rlstudy.claims.rules import FAILS, HOLDS as VERDICT_HOLDS, INCONCLUSIVE, KINDS, RANK_KINDS, Outcome, claim_p_values
from rlstudy.claims.selection import check_test
from rlstudy.core.errors import InputError
from rlstudy.core.looks import MAX_LOOK_FILE_BYTES
from rlstudy.core.regular_files import read_regular
from rlstudy.core.sequential import BinomialDesign, binomial_design, count_of_p, look_counts, p_boundaries, stagewise_p
from rlstudy.core.statistics import compare

HOLDS, FAILED, FUTILE, AT_MAXIMUM, OPEN = "holds", "fails", "stopped for futility", "undecided at its maximum", "open"
STATUSES = (HOLDS, FAILED, FUTILE, AT_MAXIMUM, OPEN)
CLAIM_COLUMNS = ("look", "claim", "test", "kind", "lists", "n", "p", "reverse_p", "hold_boundary",
                 "futility_boundary", "test_status", "sequential_p", "sequential_reverse_p", "claim_status")
# A claim's verdict in claims.csv from its last look's status.
VERDICTS = {HOLDS: VERDICT_HOLDS, FAILED: FAILS, FUTILE: INCONCLUSIVE, AT_MAXIMUM: INCONCLUSIVE, OPEN: INCONCLUSIVE}


def test_status(boundaries: list[tuple[float, float]], look: int, p: float, before: str = OPEN,
                reverse: float = 1.0, fail: float | None = None) -> str:
    """A sequential test's status after a look (0-based) at p-value p and reverse p-value `reverse`,
    given its status before it (core/sequential.p_boundaries gives the boundaries; `fail`: the fail
    boundary on the reverse p-value, by default the hold boundary)."""
    if before != OPEN:
        return before
    hold, futile = boundaries[look]
    if p <= hold * (1 + 1e-9):
        return HOLDS
    if reverse <= (hold if fail is None else fail) * (1 + 1e-9):
        return FAILED
    return FUTILE if p >= futile * (1 - 1e-9) else OPEN


def claim_status(tests: list[str]) -> str:
    """A claim's status from its tests' (intersection-union: it holds once every test has held)."""
    if all(status == HOLDS for status in tests):
        return HOLDS
    return next((status for status in (FAILED, FUTILE, AT_MAXIMUM) if status in tests), OPEN)


def lists_to_continue(claim_lists: dict[str, list[str]], statuses: dict[str, str]) -> list[str]:
    """The seed lists some open claim reads: those that go on to their next look."""
    return sorted({key for claim, lists in claim_lists.items() if statuses.get(claim, OPEN) == OPEN for key in lists})


@dataclass(frozen=True)
class PlannedTest:
    """A test of the design, as the lock fixes it."""
    claim: str
    number: int            # 1-based, in the claim's tests
    kind: str              # paired, unpaired or share
    lists: tuple[str, ...]
    level: float
    power: float
    effect: float
    counts: tuple[int, ...]  # its looks' seed counts


def planned_tests(design: dict, list_looks: dict[str, list[int]]) -> list[PlannedTest]:
    """The design's tests that read seed lists, each with its own look counts (the module's docstring)."""
    looks, found = design["looks"], []
    for plan in design.get("tests") or []:
        lists = tuple(plan.get("lists") or ())
        if not lists:
            continue
        if not all(key in list_looks for key in lists):
            raise InputError(f"the lock's design: test {plan.get('test')} of {plan.get('claim')!r} reads lists "
                             f"{list(lists)}, not all lists of the design ({sorted(list_looks)})")
        maximum = min([plan.get("maximum") or math.inf, *(list_looks[key][-1] for key in lists)])
        found.append(PlannedTest(plan["claim"], int(plan["test"]), plan["kind"], lists, float(plan["level"]),
                                 float(plan["power"]), float(plan["effect"]), tuple(look_counts(int(maximum), looks))))
    return found


def paired_design(test: PlannedTest, spending: str, level: float) -> BinomialDesign:
    """A paired test's exact sign-test design at `level`."""
    return binomial_design(test.counts, level, test.effect, spending, beta=1 - test.power)


def boundaries(test: PlannedTest, spending: str, level: float | None = None) -> list[tuple[float, float]]:
    """(hold, futility) thresholds on the p-value at each of the test's looks, at its level (or `level`)."""
    level = test.level if level is None else level
    if test.kind == "paired":
        return p_boundaries(paired_design(test, spending, level))
    return [(-1.0, 2.0)] * (len(test.counts) - 1) + [(level, level)]


def sequential_p_values(test: PlannedTest, spending: str, others: int, look: int, p: float,
                        reverse: float, status: str) -> tuple[float, float]:
    """A test's p-value and reverse p-value valid for its outcome (`status`) at this look (0-based) whatever
    the looks before saw: a paired test's stage-wise-ordering p-values (core/sequential.stagewise_p) under
    its hold design, and under its fail design (level / others) for the reverse. A stop for futility
    before the last look ends the reverse side where its count is high, which the ordering does not
    allow for (measured: up to 1.28 times the level): its reverse p is 1, conservative. Any other test
    is tested once, at its maximum, so its fixed p-values are valid as they are (NaN before: not tested)."""
    if test.kind != "paired" or math.isnan(p):
        return p, reverse
    n = test.counts[look]
    held = stagewise_p(paired_design(test, spending, test.level), look, count_of_p(n, p))
    if status == FUTILE and look < len(test.counts) - 1:
        return held, 1.0
    return held, stagewise_p(paired_design(test, spending, test.level / others), look, count_of_p(n, reverse))


def first_seeds(table: pd.DataFrame, test: PlannedTest, plan: dict[str, list[int]], count: int) -> pd.DataFrame:
    """The table's rows of the first `count` seeds of the test's lists."""
    seeds = {seed for key in test.lists for seed in plan[key][:count]}
    if "seed" not in table.columns:
        raise InputError(f"claim {test.claim!r}: its table has no 'seed' column, so no look can pick its seeds")
    return table[table["seed"].isin(seeds)]


def p_values(spec: dict, rows: pd.DataFrame, claim: str) -> tuple[float, float]:
    """A test's one-sided p-value and reverse p-value on these rows, whatever its level (a rank test's p
    where its smallest attainable p is above the level too: a look's boundary is not the level)."""
    if spec["kind"] in RANK_KINDS:
        compared = RANK_KINDS[spec["kind"]](spec, rows, claim)
        if compared.groups.too_few(spec["min_n"]):
            return 1.0, 1.0
        result = compare(compared.first, compared.second, paired=spec.get("paired", False))
        return result.p_below, result.p_above
    outcome = KINDS[spec["kind"]](spec, rows, claim)
    return outcome.p, outcome.reverse_p


def decide(look: int, design: dict, list_looks: dict[str, list[int]], plan: dict[str, list[int]],
           claims: dict, tables: dict[str, pd.DataFrame], before: dict[tuple[str, int], dict]) -> list[dict]:
    """The claims.csv rows of a look (1-based): one per planned test, its statistic, boundaries and status,
    and its claim's status. `before`: the rows of the look before (read_claims_file; {} at look 1): a test
    decided there is carried as it was; an open test of a stopped claim is not tested again."""
    by_id = {claim["id"]: claim for claim in claims["claims"]}
    tests = planned_tests(design, list_looks)
    rows = []
    for test in tests:
        if test.claim not in by_id or not 0 < test.number <= len(by_id[test.claim]["tests"]):
            raise InputError(f"the lock's design tests test {test.number} of claim {test.claim!r}, which claims.yaml "
                             "does not have")
        spec = {**claims["defaults"], **by_id[test.claim]["tests"][test.number - 1], "level": test.level}
        hold, futile = boundaries(test, design["spending"])[look - 1]
        # A claim fails once one of its m tests fails: each test's fail side at level / m (Bonferroni).
        others = sum(t.claim == test.claim for t in tests)
        fail = boundaries(test, design["spending"], test.level / others)[look - 1][0]
        earlier = before.get((test.claim, test.number))
        if earlier and (earlier["test_status"] != OPEN or earlier["claim_status"] != OPEN):
            rows.append({**earlier, "look": look})  # a test decided, or of a claim stopped: not tested again
            continue
        status, n, p, reverse = OPEN, test.counts[look - 1], math.nan, math.nan
        if hold >= 0 or futile <= 1:  # a look of this test (a fixed test has its last only)
            rows_now = first_seeds(tables[spec["table"]], test, plan, n)
            check_test(spec, rows_now, test.claim)
            p, reverse = p_values(spec, rows_now, test.claim)
            status = test_status([(hold, futile)], 0, p, OPEN, reverse, fail)
            if status == FUTILE and test.kind != "paired":
                status = AT_MAXIMUM
        sequential = sequential_p_values(test, design["spending"], others, look - 1, p, reverse, status)
        rows.append({"look": look, "claim": test.claim, "test": test.number, "kind": test.kind,
                     "lists": ";".join(test.lists), "n": n, "p": p, "reverse_p": reverse, "hold_boundary": hold,
                     "futility_boundary": futile, "test_status": status, "sequential_p": sequential[0],
                     "sequential_reverse_p": sequential[1]})
    for row in rows:
        row["claim_status"] = claim_status([r["test_status"] for r in rows if r["claim"] == row["claim"]])
    return rows


def read_claims_file(path, design_tests: list[PlannedTest] | None = None) -> dict[tuple[str, int], dict]:
    """A look's claims.csv read back, checked: its columns, each test of the design once (when given),
    statuses among STATUSES. (claim, test) -> its row."""
    text = read_regular(path, MAX_LOOK_FILE_BYTES, "a look's claims").decode("utf-8", errors="replace")
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != CLAIM_COLUMNS:
        raise InputError(f"{path}: columns {reader.fieldnames}, expected {list(CLAIM_COLUMNS)} (a look written "
                         "without the sequential p-values is refused: run the looks again)")
    found: dict[tuple[str, int], dict] = {}
    for row in reader:
        if not row["test"].isdigit() or row["test_status"] not in STATUSES or row["claim_status"] not in STATUSES:
            raise InputError(f"{path}: claim {row['claim']!r}: test {row['test']!r}, statuses {row['test_status']!r}/"
                             f"{row['claim_status']!r}: expected a test number and statuses among {list(STATUSES)}")
        for column in ("p", "reverse_p", "sequential_p", "sequential_reverse_p"):
            if not is_p_value(row[column]):
                raise InputError(f"{path}: claim {row['claim']!r}: {column} {row[column]!r}: expected a p-value "
                                 "in [0, 1] or nan")
        for column in ("hold_boundary", "futility_boundary"):  # -1: cannot hold; 2: no futility stop
            if not is_boundary(row[column]):
                raise InputError(f"{path}: claim {row['claim']!r}: {column} {row[column]!r}: expected a boundary "
                                 "in [0, 1], -1 or 2")
        if not row["n"].isdigit():
            raise InputError(f"{path}: claim {row['claim']!r}: n {row['n']!r}: expected a count")
        key = (row["claim"], int(row["test"]))
        if key in found:
            raise InputError(f"{path}: test {key[1]} of claim {key[0]!r} appears twice")
        found[key] = row
    if design_tests is not None:
        wanted = {(t.claim, t.number) for t in design_tests}
        if set(found) != wanted:
            odd = sorted(set(found) ^ wanted)
            raise InputError(f"{path}: its tests are not the design's (differing: {odd[:3]})")
    return found


def is_p_value(text: str) -> bool:
    """Whether a field read back is a p-value in [0, 1], or empty or nan (a test not run yet)."""
    try:
        value = float(text or "nan")
    except ValueError:
        return False
    return math.isnan(value) or 0.0 <= value <= 1.0


def is_boundary(text: str) -> bool:
    """Whether a field read back is a boundary on p: in [0, 1], or -1 (no hold) or 2 (no futility stop)."""
    try:
        value = float(text)
    except ValueError:
        return False
    return 0.0 <= value <= 1.0 or value in (-1.0, 2.0)


def lists_rows(look: int, rows: list[dict], list_looks: dict[str, list[int]], counts: dict[str, int]) -> list[dict]:
    """The lists.csv rows of a look: per list its count, and whether it continues (an open claim reads it
    and it has a next count) to which count."""
    reads: dict[str, list[str]] = {}
    for row in rows:
        reads.setdefault(row["claim"], []).extend(row["lists"].split(";"))
    going = set(lists_to_continue(reads, {row["claim"]: row["claim_status"] for row in rows}))
    found = []
    for key, looks in sorted(list_looks.items()):
        count = counts[key]
        following = looks[looks.index(count) + 1] if count != looks[-1] else None
        more = key in going and following is not None
        found.append({"list": key, "look": look, "count": count, "status": "continue" if more else "stop",
                      "next_count": following if more else count})
    return found


def apply_looks(table: pd.DataFrame, decisions: dict[tuple[str, int], dict]) -> pd.DataFrame:
    """claims.csv with every claim the design tests decided by its last look: its verdict that look's
    status (holds, fails; stopped for futility or undecided at its maximum: inconclusive), its evidence
    led by the look."""
    status = {claim: row for (claim, _), row in decisions.items()}
    table = table.copy()
    for i, claim in table["id"].items():
        if claim in status:
            row = status[claim]
            table.loc[i, "verdict"] = VERDICTS[row["claim_status"]]
            table.loc[i, "evidence"] = (f"[group-sequential design: {row['claim_status']} at look {row['look']} "
                                        f"(results/looks/look{row['look']}/claims.csv)] {table.loc[i, 'evidence']}")
    return table


def study_p_values(decisions: dict[tuple[str, int], dict]) -> dict[str, tuple[float, float]]:
    """Each claim of the design's p-value and reverse p-value for the study-wide Holm (rules.decide's
    `study_p`): the intersection-union of its tests' sequential p-values (rules.claim_p_values). A test
    still open (its claim stopped before it was decided, or the design has not ended) counts p = 1 and
    reverse p = 1: conservative, as if it could never decide (and so does one with no p-value)."""
    outcomes: dict[str, list[Outcome]] = {}
    for (claim, _), row in sorted(decisions.items()):
        p, reverse = (1.0, 1.0) if row["test_status"] == OPEN else (float(row["sequential_p"] or "nan"),
                                                                    float(row["sequential_reverse_p"] or "nan"))
        p, reverse = (1.0 if math.isnan(p) else p), (1.0 if math.isnan(reverse) else reverse)
        outcomes.setdefault(claim, []).append(Outcome(row["test_status"], "", "", p, reverse))
    return {claim: claim_p_values(found) for claim, found in outcomes.items()}
