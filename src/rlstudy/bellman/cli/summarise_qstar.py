"""How far each learned Q* is from the truth: results/reference/error_exact.csv, one row per dataset
and task, with the centred error of Q* against the exact Q, the exact Q's own centred norm, and
their ratio `error_exact_normalised` (0: exact; 1: as far off as a flat Q); then the same with one
common centring over both actions (`error_exact_common`, `exact_common_centred_norm`,
`error_exact_common_normalised`: it sees an offset between the actions, metrics.py); and for
control, Q*'s greedy policy evaluated exactly (`greedy_shortfall`, `greedy_wrong_share`:
bellman/problem/greedy.py; empty for evaluation); last, `error_exact_weighted_normalised`: the centred
error weighted by the stationary density of the task's behaviour policy (where Q*'s data are:
bellman/problem/stationary.py) over the exact Q's norm in that metric."""

from __future__ import annotations

import pandas as pd
import torch

from rlstudy.bellman.problem.exact import load_exact
from rlstudy.bellman.problem.greedy import GreedyJudge
from rlstudy.bellman.learners.metrics import (
    GRID_POINTS,
    centred_error,
    centred_norm,
    common_centred_error,
    common_centred_norm,
    exact_scores,
    q_on_grid,
)
from rlstudy.bellman.numerics.compiled.qnet import load_network
from rlstudy.bellman.problem.sde import Dynamics, Problem
from rlstudy.bellman.problem.stationary import load_density
from rlstudy.core.cli import build, json_arg, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import provenance

ENTRY_KEYS = {"dataset", "task", "reference", "exact", "dynamics", "made_by", "density"}


def reference_row(entry: dict, gamma: float) -> dict:
    network = load_network(entry["reference"], "a learned Q*")
    whole = load_exact(entry["exact"], None)
    exact = torch.from_numpy(load_exact(entry["exact"], GRID_POINTS))
    q = q_on_grid(network)
    error, norm = centred_error(q, exact), centred_norm(exact)
    common, common_norm = common_centred_error(q, exact), common_centred_norm(exact)
    dynamics = build(Dynamics, entry["dynamics"], "config 'dynamics'")
    judge = GreedyJudge.build(whole, gamma, dynamics) if entry["task"] == "control" else None
    scores = exact_scores(network, whole, judge, load_density(entry["density"], GRID_POINTS))
    return {"dataset": entry["dataset"], "task": entry["task"], "made_by": entry["made_by"],
            "error_exact": error, "exact_centred_norm": norm, "error_exact_normalised": error / norm,
            "error_exact_common": common, "exact_common_centred_norm": common_norm,
            "error_exact_common_normalised": common / common_norm,
            "greedy_shortfall": scores["greedy_shortfall"], "greedy_wrong_share": scores["greedy_wrong_share"],
            "error_exact_weighted_normalised": scores["error_exact_weighted_normalised"]}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--entries", type=json_arg, required=True,
                   help='JSON {"rows": [{"dataset", "task", "reference": Q* .pt, "exact": q_exact.npy, '
                        '"dynamics": sde.Dynamics, "made_by": how Q* was made, "density": stationary_density.npy}, ...]}')
    p.config_option("--problem", "problem", type=json_arg,
                    help="JSON of the problem (sde.Problem); its gamma is every run's discount, each row gives its dataset's dynamics")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    gamma = Problem.from_config(args.problem, "--problem").gamma
    entries = args.entries.get("rows")
    if not isinstance(entries, list) or not entries:
        raise InputError('--entries: expected {"rows": [...]} with at least one row')
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != ENTRY_KEYS:
            got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise InputError(f"--entries: each row needs exactly the keys {sorted(ENTRY_KEYS)}, got {got}")
        not_text = sorted(key for key, value in entry.items() if key != "dynamics" and not isinstance(value, str))
        if not_text or not isinstance(entry["dynamics"], dict):
            raise InputError(f"--entries: row {entry.get('dataset')!r} {entry.get('task')!r}: keys "
                             f"{not_text or ['dynamics']} must be text (dynamics: an object)")
    table = pd.DataFrame([reference_row(entry, gamma) for entry in entries])
    print(table.to_string(index=False))
    inputs = {f"{e['dataset']} {e['task']} {kind}": e[kind] for e in entries for kind in ("reference", "exact", "density")}
    save_csv(args.out, table, provenance({"rows": entries, "gamma": gamma}, None, inputs))


if __name__ == "__main__":
    run(main)
