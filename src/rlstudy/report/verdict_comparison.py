"""Each claim's verdict in two runs, side by side (report/cli/compare_verdicts.py, report/verify.py):
read from a run's results/claims.csv or from the published page docs/claims.md (its generated table),
with whether the run could test the claim, and each side's scale (report/table_scale.py): verdicts of two
scales do not compare.
"""

from __future__ import annotations

import re

import pandas as pd

from rlstudy.claims.rules import FAILS, HOLDS, INCONCLUSIVE
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv
from rlstudy.core.markdown import generated_block, markers
from rlstudy.core.regular_files import read_regular, shown
from rlstudy.report.table_scale import OTHER, PAPER, scale_problem, stated_scale

# A row of docs/claims.md's generated table: | `id` | statement | verdict mark | evidence |
PAGE_ROW = re.compile(r"^\| `(?P<id>[^`]+)` \| .* \| (?P<mark>holds|\*\*fails\*\*|\*inconclusive\*) \| (?P<evidence>.*) \|$")
MARKS = {"holds": HOLDS, "**fails**": FAILS, "*inconclusive*": INCONCLUSIVE}
# rules.py's evidence for a test whose table a run did not have, or that found none of its rows
UNTESTED = re.compile(r"not given|\b0 (?:vs 0 )?rows|no rows: this run made none")


# A claims page is a few tens of KB; a bigger file is not one.
MAX_PAGE_BYTES = 8 << 20


def read_page(path: str) -> str:
    """A page's text, opened as a regular file of at most MAX_PAGE_BYTES."""
    try:
        return read_regular(path, MAX_PAGE_BYTES, "a claims page").decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"cannot read {shown(path)}: not UTF-8 text ({err.reason})") from err


def verdicts(path: str) -> pd.DataFrame:
    """id, verdict and whether the run had every table of the claim, from a claims.csv or the page."""
    if path.endswith(".md"):
        rows = [match.groupdict() for line in read_page(path).splitlines() if (match := PAGE_ROW.match(line))]
        if not rows:
            raise InputError(f"{path}: no row of the generated claims table")
        table = pd.DataFrame(rows)
        table["verdict"] = table.pop("mark").map(MARKS)
    else:
        table = load_csv(path, "a claims table")
        if not {"id", "verdict", "evidence"} <= set(table.columns):
            raise InputError(f"{path}: a claims table has the columns id, verdict and evidence")
    table["tested"] = ~table["evidence"].fillna("").str.contains(UNTESTED)
    return table.set_index("id")[["verdict", "tested"]]


def scale_of(path: str, config: str) -> tuple[str | None, str]:
    """(PAPER or OTHER, why) of one side: a page's as its one generated block states it (None where it
    states none; a page without one such block is refused), a claims.csv's from its runs' parameters
    (render_readme's check)."""
    if path.endswith(".md"):
        start, end = markers("claims-table")
        block = generated_block(read_page(path), start, end)
        if block is None:
            raise InputError(f"{path}: expected one generated claims table between '{start}' and '{end}', so "
                             "the scale it states is not known; pass --allow-scales to compare anyway")
        return stated_scale(block), "its generated block says so"
    problem = scale_problem(path, config)
    return (PAPER, "") if problem is None else (OTHER, problem)


def refuse_other_scales(before: str, after: str, config: str) -> None:
    """One line, status 2, unless both sides are of one scale."""
    scales = [(path, *scale_of(path, config)) for path in (before, after)]
    for path, scale, _ in scales:
        if scale is None:
            raise InputError(f"{path}: its generated claims table states no scale (rendered before render_readme "
                             "wrote one: re-render it), so its verdicts may be of another scale; "
                             "pass --allow-scales to compare anyway")
    if scales[0][1] != scales[1][1]:
        (other, _, why), (paper, _, _) = sorted(scales, key=lambda side: side[1] == PAPER)
        raise InputError(f"{other} is not from the paper-scale profile ({why}) and {paper} is: verdicts of two "
                         "scales do not compare (a smoke run's smaller budgets move most of them); "
                         "pass --allow-scales to compare them anyway")


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """One row per claim of either run: both verdicts and `moved` (NA where not compared: a claim of
    one run only, or one that either run could not test)."""
    both = before.add_suffix("_before").join(after.add_suffix("_after"), how="outer")
    compared = both["tested_before"].eq(True) & both["tested_after"].eq(True)
    both["moved"] = (both["verdict_before"] != both["verdict_after"]).astype("boolean").mask(~compared)
    return both[["verdict_before", "verdict_after", "moved"]]


