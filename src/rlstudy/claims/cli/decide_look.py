"""One look of the confirmatory block's group-sequential design (core/looks.py runs the looks; claims/looks.py
decides them): every test the lock's design plans, on the first seeds of its lists this look gives it, with
its statistic, boundaries and status, and its claim's (results/looks/look{k}/claims.csv); per seed list its
count and whether it continues to the next look (lists.csv). The looks made before are read back as data
and checked against the design; this look must be the next one."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.claims.loading import load_claims, named_tables
from rlstudy.claims.looks import decide, lists_rows, planned_tests, read_claims_file
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.cli import parser, run
from rlstudy.core.config import ConfigError
from rlstudy.core.errors import InputError
from rlstudy.core.looks import CLAIMS_FILE, LISTS_FILE, design_lists, locked_design, look_dir, look_state
from rlstudy.core.provenance import provenance
from rlstudy.core.seed_blocks import locked_plan


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--claims", required=True, help="claims.yaml")
    p.add_argument("--schema", required=True, help="its JSON schema (workflow/schemas/claims.schema.yaml)")
    p.add_argument("--lock", required=True, help="protocol.lock: the design and the confirmatory seed lists")
    p.add_argument("--look", required=True, type=int, help="the look to make (1-based)")
    p.add_argument("--looks-dir", required=True, help="where the looks are (results/looks)")
    p.add_argument("--table", nargs="+", required=True, metavar="NAME=CSV", help="the result tables the design's tests read")
    args = p.parse_args()
    lock, root = Path(args.lock), Path(args.looks_dir)
    try:
        design, plan = locked_design(lock), locked_plan(lock)
        list_looks = design_lists(design)
        state = look_state(list_looks, root)
    except ConfigError as err:
        raise InputError(str(err)) from err
    if state.current != args.look:
        raise InputError(f"--look {args.look}: the looks under {root} make look {state.current} next "
                         "(None: the design has finished)")
    claims = load_claims(Path(args.claims), Path(args.schema))
    paths, tables = named_tables(args.table)
    before = {}
    if args.look > 1:
        before = read_claims_file(look_dir(args.look - 1, root) / CLAIMS_FILE, planned_tests(design, list_looks))
    rows = decide(args.look, design, list_looks, plan, claims, tables, before)
    lists = lists_rows(args.look, rows, list_looks, state.counts)
    for row in rows:
        print(f"look {args.look}: {row['claim']} test {row['test']} (n = {row['n']}): p = {row['p']}, "
              f"{row['test_status']}; claim {row['claim_status']}")
    for row in lists:
        print(f"look {args.look}: {row['list']} at {row['count']} seeds: {row['status']}")
    record = provenance({"look": args.look, "design": design}, None, {"claims": args.claims, "lock": args.lock, **paths})
    out = look_dir(args.look, root)
    save_csv(out / CLAIMS_FILE, pd.DataFrame(rows), record)
    save_csv(out / LISTS_FILE, pd.DataFrame(lists), record)  # last: a look is made once its lists.csv is there


if __name__ == "__main__":
    run(main)
