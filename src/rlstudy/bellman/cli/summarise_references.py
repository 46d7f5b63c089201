"""How far each learned Q* is from the truth: results/reference/error_exact.csv, one row per dataset
and task, with the centred error of Q* against the exact Q, the exact Q's own centred norm, and
their ratio `error_exact_normalised` (0: exact; 1: as far off as a flat Q)."""

from __future__ import annotations

import pandas as pd
import torch

from rlstudy.bellman.exact import load_exact
from rlstudy.bellman.metrics import GRID_POINTS, centred_error, centred_norm, q_on_grid
from rlstudy.bellman.qnet import load_network
from rlstudy.core.cli import json_arg, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.io import provenance, save_csv

ENTRY_KEYS = {"dataset", "task", "reference", "exact", "made_by"}


def reference_row(entry: dict) -> dict:
    exact = torch.from_numpy(load_exact(entry["exact"], GRID_POINTS))
    error = centred_error(q_on_grid(load_network(entry["reference"], "a learned Q*")), exact)
    norm = centred_norm(exact)
    return {"dataset": entry["dataset"], "task": entry["task"], "made_by": entry["made_by"],
            "error_exact": error, "exact_centred_norm": norm, "error_exact_normalised": error / norm}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--entries", type=json_arg, required=True,
                   help='JSON {"rows": [{"dataset", "task", "reference": Q* .pt, "exact": q_exact.npy, '
                        '"made_by": how Q* was made}, ...]}')
    p.add_argument("--out", required=True)
    args = p.parse_args()
    entries = args.entries.get("rows")
    if not isinstance(entries, list) or not entries:
        raise InputError('--entries: expected {"rows": [...]} with at least one row')
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != ENTRY_KEYS:
            got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise InputError(f"--entries: each row needs exactly the keys {sorted(ENTRY_KEYS)}, got {got}")
        not_text = sorted(key for key, value in entry.items() if not isinstance(value, str))
        if not_text:
            raise InputError(f"--entries: row {entry.get('dataset')!r} {entry.get('task')!r}: keys {not_text} must be text")
    table = pd.DataFrame([reference_row(entry) for entry in entries])
    print(table.to_string(index=False))
    inputs = {f"{e['dataset']} {e['task']} {kind}": e[kind] for e in entries for kind in ("reference", "exact")}
    save_csv(args.out, table, provenance({"rows": entries}, None, inputs))


if __name__ == "__main__":
    run(main)
