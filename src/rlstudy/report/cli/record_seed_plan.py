"""results/seed_plan.csv: the replicate seed lists of this run and the block they are of (one row per
list and seed), with the block and lists in its provenance record. The claims rule reads it as an input,
so that results/claims.csv's record names the seed plan its verdicts rest on; render_readme compares it
with the protocol (rlstudy.report.protocol). The Snakefile resolves the block (core/seed_blocks.py);
this step records what it resolved to."""

from __future__ import annotations

import json

from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import provenance
from rlstudy.core.seed_blocks import BLOCKS
from rlstudy.report.protocol import seed_plan_table


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--block", required=True, choices=BLOCKS, help="the seed block the lists are of")
    p.add_argument("--plan", required=True, help="the lists as JSON: key -> seeds (core/seed_blocks.seed_lists)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    try:
        plan = json.loads(args.plan)
    except ValueError as err:
        raise InputError(f"--plan: not JSON ({err})") from err
    if not isinstance(plan, dict) or not all(
            isinstance(seeds, list) and all(isinstance(s, int) and s >= 0 for s in seeds) for seeds in plan.values()):
        raise InputError("--plan: expected a mapping of list keys to lists of seeds (integers >= 0)")
    record = provenance({"seed_block": args.block, "plan": plan}, None, {})
    save_csv(args.out, seed_plan_table(args.block, plan), record)


if __name__ == "__main__":
    run(main)
