"""Every claim of claims.yaml with its verdict: results/claims.csv (id, source, statement, estimand,
family, verdict, the claim's p-value and reverse p-value raw and Holm-adjusted within its family,
evidence in numbers: each test, its level and p-values, the seeds it rests on). The claims file is
checked against its schema first; its tests are data, read by claims/rules.py, never code.

With --seed-power, also every rank test's power at the stated effect (claims/planning.py: planned,
not estimated from the results) at the claims file's `defaults.planning.sizes`, with the seeds its
effect needs (rules.seed_power): results/seed_power.csv.

With --looks (the last look's claims.csv, where the confirmatory block runs a group-sequential design:
core/looks.py), every claim the design tests is decided by that look (claims/looks.apply_looks), and its
study-wide p-values are the sequential ones of its tests (claims/looks.study_p_values).

With --publication (docs/publications/protocol-<k>.json, one per protocol), every claim marked `carried: k`
keeps protocol k's published verdict, outside both Holm procedures (claims/publication.py); its row still shows what
this run's data say."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.claims.loading import load_claims, named_tables
from rlstudy.claims.looks import apply_looks, read_claims_file, study_p_values
from rlstudy.claims.publication import carried_verdicts, load_publications
from rlstudy.claims.rules import decide, seed_power, seed_power_columns
from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import provenance


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--claims", required=True, help="claims.yaml")
    p.add_argument("--schema", required=True, help="its JSON schema (workflow/schemas/claims.schema.yaml)")
    p.add_argument("--table", nargs="+", required=True, metavar="NAME=CSV",
                   help="the result tables by name (summary, references, sweep, cost, agents, offline, budget); a claim "
                        "on a table not given is inconclusive")
    p.add_argument("--out", required=True)
    p.add_argument("--seed-power", help="where to write every rank test's power at the power sizes (CSV)")
    p.add_argument("--publication", nargs="+", default=[], metavar="JSON",
                   help="the publications whose verdicts the claims marked `carried` keep "
                        "(docs/publications/protocol-<k>.json)")
    p.add_argument("--looks", help="the last look's claims.csv (results/looks/look<k>/claims.csv): its claims' verdicts")
    args = p.parse_args()
    claims = load_claims(Path(args.claims), Path(args.schema))
    paths, tables = named_tables(args.table)
    decisions = read_claims_file(args.looks) if args.looks else {}
    unknown = sorted({claim for claim, _ in decisions} - {claim["id"] for claim in claims["claims"]})
    if unknown:
        raise InputError(f"{args.looks}: claims {unknown[:3]} are not in {args.claims}")
    carried = carried_verdicts(claims["claims"], *load_publications(args.publication))
    table = pd.DataFrame(decide(claims["claims"], tables, claims["defaults"], study_p_values(decisions), carried))
    if args.looks:
        table = apply_looks(table, decisions)
        paths["looks"] = args.looks
    paths |= {f"publication_{number}": path for number, path in enumerate(args.publication, start=1)}
    for row in table.itertuples():
        print(f"{row.verdict:>12}  {row.id}: {row.evidence}")
    power = None
    if args.seed_power:  # computed before anything is written: a failure leaves neither table
        power = pd.DataFrame([row for claim in claims["claims"] for row in seed_power(claim, tables, claims["defaults"])],
                             columns=seed_power_columns(claims["defaults"]))
    record = provenance({"defaults": claims["defaults"]}, None, {"claims": args.claims, **paths})
    save_csv(args.out, table, record)
    if power is not None:
        save_csv(args.seed_power, power, record)


if __name__ == "__main__":
    run(main)
