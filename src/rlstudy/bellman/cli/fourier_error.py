"""Each run's final error against the exact Q by Fourier mode: results/fourier_error.csv, one row per
run and mode k = 0..--modes.

The per-action difference D = Q_run - Q_exact on the metric's 100-point grid is Fourier transformed
over the states; `error` is e_k = sqrt(2*pi * sum_a c_k |D^_ak / n|^2) (metrics.error_by_mode: c_k
counts the modes a real signal holds twice), so that the e_k^2 of k >= 1 over all modes add up to
the run's squared centred error (k = 0 is the offset that centring removes); `error_normalised` is
e_k over the exact Q's centred norm, so the same sum gives final_error_exact_normalised^2. Beside each
mode, `bellman_contraction` = gamma * exp(-sigma^2 * dt * k^2 / 2): how much one exact Bellman step
shrinks mode k of an error (the step's Gaussian damps the high modes, so they are the slow ones to
learn only through the data's noise, and the fast ones to be forgotten).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from rlstudy.bellman.results.error_curves import RUN_KEYS, load_error_curves
from rlstudy.bellman.problem.exact import load_exact
from rlstudy.bellman.learners.metrics import GRID_POINTS, centred_norm, error_by_mode, q_on_grid
from rlstudy.bellman.numerics.compiled.qnet import load_network
from rlstudy.bellman.problem.sde import Dynamics, Problem
from rlstudy.core.cli import build, integer_from, json_arg, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import provenance

ENTRY_KEYS = {"dataset", "task", "exact", "dynamics"}


def bellman_contraction(modes: np.ndarray, gamma: float, dynamics: Dynamics) -> np.ndarray:
    """The factor by which one exact Bellman step shrinks Fourier mode k of an error in Q."""
    return gamma * np.exp(-0.5 * dynamics.sigma**2 * dynamics.dt * modes.astype(np.float64) ** 2)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--curves", nargs="+", required=True, help="errors.csv of every run, its q.pt beside it")
    p.add_argument("--exact", type=json_arg, required=True,
                   help='JSON {"rows": [{"dataset", "task", "exact": q_exact.npy, "dynamics": sde.Dynamics}, ...]} '
                        "(further keys, such as the rule's density, are ignored)")
    p.config_option("--problem", "problem", type=json_arg,
                    help="JSON of the problem (sde.Problem); its gamma is every run's discount, each row gives its dataset's dynamics")
    p.add_argument("--modes", type=integer_from(1), default=12, help="the highest Fourier mode K tabulated")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    gamma = Problem.from_config(args.problem, "--problem").gamma
    if args.modes > GRID_POINTS // 2:
        raise InputError(f"--modes must be at most {GRID_POINTS // 2} (the metric's grid), got {args.modes}")
    entries = args.exact.get("rows")
    if not isinstance(entries, list) or not entries:
        raise InputError('--exact: expected {"rows": [...]} with at least one row')
    references = {}
    for entry in entries:
        if not isinstance(entry, dict) or not ENTRY_KEYS <= set(entry):
            raise InputError(f"--exact: each row needs the keys {sorted(ENTRY_KEYS)}, got {entry!r}")
        not_text = sorted(key for key in ENTRY_KEYS - {"dynamics"} if not isinstance(entry[key], str))
        if not_text or not isinstance(entry["dynamics"], dict):
            raise InputError(f"--exact: row {entry.get('dataset')!r} {entry.get('task')!r}: keys "
                             f"{not_text or ['dynamics']} must be text (dynamics: an object)")
        exact = load_exact(entry["exact"], GRID_POINTS)
        references[entry["dataset"], entry["task"]] = (
            exact, centred_norm(torch.from_numpy(exact)), build(Dynamics, entry["dynamics"], "config 'problem.dynamics'"))
    modes = np.arange(args.modes + 1)
    rows = []
    for path, curve in zip(args.curves, load_error_curves(args.curves)):
        keys = dict(zip(RUN_KEYS, curve[RUN_KEYS].iloc[0]))
        if (keys["dataset"], keys["task"]) not in references:
            raise InputError(f"--exact: no exact Q given for dataset {keys['dataset']!r}, task {keys['task']!r}")
        exact, norm, dynamics = references[keys["dataset"], keys["task"]]
        q = q_on_grid(load_network(Path(path).parent / "q.pt", "a run's network")).double().numpy()
        error = error_by_mode(q, exact, args.modes)
        rows.append(pd.DataFrame({**keys, "mode": modes, "error": error, "error_normalised": error / norm,
                                  "bellman_contraction": bellman_contraction(modes, gamma, dynamics)}))
    table = pd.concat(rows).sort_values([*RUN_KEYS, "mode"], kind="stable").reset_index(drop=True)
    print(table.groupby(["dataset", "task", "setting", "estimator", "mode"])["error_normalised"].median().to_string())
    inputs = {f"exact {e['dataset']} {e['task']}": e["exact"] for e in entries}
    inputs |= {name: name for path in args.curves for name in (path, str(Path(path).parent / "q.pt"))}
    save_csv(args.out, table, provenance({"gamma": gamma, "modes": args.modes, "exact": args.exact,
                                         "grid_points": GRID_POINTS}, None, inputs))


if __name__ == "__main__":
    run(main)
