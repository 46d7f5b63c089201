"""Each claim's verdict in two runs, side by side: what a change of the code did to the verdicts.

A change that moves a kernel's last bits changes every run after the first few steps, so its runs
are compared by their verdicts (a speed change must leave them unchanged, or say which moved). --before and --after are each a run's results/claims.csv or the published page
docs/claims.md (its generated table: the verdicts of the published run). A claim that a run could
not test, because one of its tables was not given or held none of its rows (a partial run:
`snakemake study` has no sweep, cost, agents or offline tables, a run without `authors_data` no
runs on the authors' data), is listed as not compared. Prints a Markdown table of every claim
and a count; --check exits with status 1 when a compared verdict moved.

Verdicts of two scales do not compare (a smoke run's smaller budgets move most of them): each side's
scale is told the way render_readme tells it (rlstudy.report.table_scale): a claims.csv is paper-scale when
every run it was computed from, followed through its provenance records from where this runs, was
made with the parameters of --config; the claims page states the scale it was rendered from. A
paper-scale side against one that is not, or a page that states no scale (or holds no one generated
table), is refused (status 2) unless --allow-scales; two sides of the same other scale (two smoke runs) are compared.

    python -m rlstudy.report.cli.compare_verdicts --before docs/claims.md --after results/claims.csv
"""

from __future__ import annotations

import sys

import pandas as pd

from rlstudy.report.verdict_comparison import compare, refuse_other_scales, verdicts
from rlstudy.core.cli import parser, run


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
