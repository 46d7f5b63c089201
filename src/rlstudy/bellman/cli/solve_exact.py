"""Solve a task's exact Q on a grid of the circle (bellman/problem/exact.py) and write it with its refinement.

Writes q_exact.npy (float64, (n, 2): Q(s_i, a) at s_i = 2*pi*i/n, actions -1 and +1) and
refinement.csv (each grid tried, its Bellman iterations and how much doubling it moved Q); the
provenance records the final grid and its relative change, which is below --rtol.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pandas as pd

from rlstudy.bellman.problem.exact import EVALUATED_POLICY, solve
from rlstudy.bellman.problem.sde import TASKS, Problem
from rlstudy.core.cli import finite_float, json_arg, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv, save_npy
from rlstudy.core.provenance import provenance


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True,
                   help="evaluation: Q of the evaluation policy; control: the optimal Q")
    p.add_argument("--problem", type=json_arg, required=True,
                   help="JSON of config 'problem': the dynamics (reward_of included) and the discount gamma")
    p.config_option("--rtol", "exact.rtol", type=finite_float, help="stop doubling the grid once Q moves less than this")
    p.add_argument("--out-dir", required=True)
    args = p.parse_args()
    problem = Problem.from_config(args.problem)
    if not 0 < args.rtol <= 0.01:
        raise InputError(f"--rtol must be in (0, 0.01], got {args.rtol} (config key 'exact.rtol')")
    solution, refinement = solve(EVALUATED_POLICY[args.task], problem.gamma, problem.dynamics, rtol=args.rtol)
    table = pd.DataFrame([asdict(r) for r in refinement])
    print(table.to_string(index=False))
    final = refinement[-1]
    record = provenance({"task": args.task, "policy": EVALUATED_POLICY[args.task] or "optimal",
                         "gamma": problem.gamma, "dynamics": args.problem["dynamics"], "rtol": args.rtol,
                         "grid_points": final.points, "relative_change_of_last_doubling": final.relative_change},
                        None, {})
    out = Path(args.out_dir)
    save_npy(out / "q_exact.npy", solution.values, record)
    save_csv(out / "refinement.csv", table, record)


if __name__ == "__main__":
    run(main)
