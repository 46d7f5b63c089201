"""Solve the stationary state density of a task's behaviour policy (bellman/problem/stationary.py): where
the task's data are, the weight of the density-weighted error metric.

Writes stationary_density.npy (float64, (n,): the density at s_i = 2*pi*i/n, normalised to mean 1
over the grid, i.e. the probability density times 2*pi; n a multiple of the metric's 100 points,
so the metric reads every (n/100)-th value). The density depends on the dynamics' dt and sigma and
on the behaviour policy, not on the reward, so one file serves both reward conventions and both
datasets (the authors' trajectories follow the same policies). The provenance records the grid and
how much its last doubling moved the density (below --rtol).
"""

from __future__ import annotations

from pathlib import Path

from rlstudy.bellman.problem.sde import POLICY_OF_TASK, TASKS, Dynamics
from rlstudy.bellman.problem.stationary import stationary_density
from rlstudy.core.cli import build, finite_float, json_arg, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_npy
from rlstudy.core.provenance import provenance


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True,
                   help="whose data: evaluation (the evaluation policy) or control (the uniform policy)")
    p.add_argument("--dynamics", type=json_arg, required=True, help="JSON of config 'problem.dynamics'")
    p.add_argument("--rtol", type=finite_float, default=1e-8,
                   help="stop doubling the grid once the density moves less than this, relative to its max")
    p.add_argument("--out", required=True, help="the density (.npy)")
    args = p.parse_args()
    dynamics = build(Dynamics, args.dynamics, "config 'problem.dynamics'")
    if not 0 < args.rtol <= 0.01:
        raise InputError(f"--rtol must be in (0, 0.01], got {args.rtol}")
    policy = POLICY_OF_TASK[args.task]
    density, refinement = stationary_density(policy, dynamics, rtol=args.rtol)
    for step in refinement:
        print(f"{step.points} points: relative change {step.relative_change:.3g}")
    print(f"max/min density {density.max() / density.min():.4g}")
    record = provenance({"task": args.task, "policy": policy, "dynamics": args.dynamics, "rtol": args.rtol,
                         "normalised": "mean 1 over the grid", "grid_points": len(density),
                         "relative_change_of_last_doubling": refinement[-1].relative_change,
                         "refinement_points": [step.points for step in refinement]}, None, {})
    save_npy(Path(args.out), density, record)


if __name__ == "__main__":
    run(main)
