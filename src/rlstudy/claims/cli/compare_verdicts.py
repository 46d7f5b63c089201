"""Each claim's verdict in two runs, side by side: what a change of the code did to the verdicts.

A change that moves a kernel's last bits changes every run after the first few steps, so its runs
are compared by their verdicts (issue 23: the speed work must leave them unchanged, or say which
moved). --before and --after are each a run's results/claims.csv or the published page
docs/claims.md (its generated table: the verdicts of the published run). A claim that a run could
not test, because one of its tables was not given or held none of its rows (a partial run:
`snakemake study` has no sweep, cost, agents or offline tables, a run without `authors_data` no
runs on the authors' data), is listed as not compared. Prints a Markdown table of every claim
and a count; --check exits with status 1 when a compared verdict moved.

Verdicts of two scales do not compare (a smoke run's smaller budgets move most of them): each side's
scale is told the way render_readme tells it (rlstudy.report.scale): a claims.csv is paper-scale when
every run it was computed from, followed through its provenance records from where this runs, was
made with the parameters of --config; the claims page states the scale it was rendered from. A
paper-scale side against one that is not, or a page that states no scale (or holds no one generated
table), is refused (status 2) unless --allow-scales; two sides of the same other scale (two smoke runs) are compared.

    python -m rlstudy.claims.cli.compare_verdicts --before docs/claims.md --after results/claims.csv
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

from rlstudy.claims.rules import FAILS, HOLDS, INCONCLUSIVE
from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv
from rlstudy.core.markdown import generated_block, markers
from rlstudy.report.scale import OTHER, PAPER, scale_problem, stated_scale

# A row of docs/claims.md's generated table: | `id` | statement | verdict mark | evidence |
PAGE_ROW = re.compile(r"^\| `(?P<id>[^`]+)` \| .* \| (?P<mark>holds|\*\*fails\*\*|\*inconclusive\*) \| (?P<evidence>.*) \|$")
MARKS = {"holds": HOLDS, "**fails**": FAILS, "*inconclusive*": INCONCLUSIVE}
# rules.py's evidence for a test whose table a run did not have, or that found none of its rows
UNTESTED = re.compile(r"not given|\b0 (?:vs 0 )?rows")


def read_page(path: str) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {path}: {getattr(err, 'strerror', None) or err}") from err


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


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--before", required=True, help="claims.csv of the earlier run, or docs/claims.md")
    p.add_argument("--after", required=True, help="claims.csv of the later run, or a claims page")
    p.add_argument("--check", action="store_true", help="exit with status 1 when a compared verdict moved")
    p.add_argument("--allow-scales", action="store_true",
                   help="compare the verdicts even when one side is of the paper's scale and the other is not "
                        "(a smoke run's against the published page), or a page states no scale")
    p.add_argument("--config", default="config.yaml",
                   help="the config whose run parameters make the paper's scale (as render_readme reads it)")
    args = p.parse_args()
    before, after = verdicts(args.before), verdicts(args.after)
    if not args.allow_scales:
        refuse_other_scales(args.before, args.after, args.config)
    table = compare(before, after)
    print("| claim | before | after | |\n| --- | --- | --- | --- |")
    for claim, row in table.iterrows():
        note = "not compared" if pd.isna(row.moved) else ("**moved**" if row.moved else "")
        print(f"| `{claim}` | {row.verdict_before} | {row.verdict_after} | {note} |")
    compared = table["moved"].dropna()
    print(f"\n{len(compared)} claims compared, {int(compared.sum())} moved; {len(table) - len(compared)} not compared")
    if args.check and compared.any():
        sys.exit(1)


if __name__ == "__main__":
    run(main)
