"""Sample one SDE trajectory of a task's policy and write it as a dataset folder."""

from __future__ import annotations

import time

from rlstudy.bellman.data.trajectories import save_trajectory
from rlstudy.bellman.problem.sde import POLICY_OF_TASK, TASKS, Dynamics, sample_trajectory
from rlstudy.core import seeding
from rlstudy.core.cli import build, integer_from, json_arg, parser, run
from rlstudy.core.provenance import provenance


def main() -> None:
    p = parser(__doc__ + "\nThe workflow's rule trajectory (workflow/rules/datasets.smk) runs it for each task and size,\n"
               "every option marked 'config' taken from the config.\n")
    p.add_argument("--task", choices=TASKS, required=True,
                   help="evaluation: pi(+1|s) = 1/2 + sin(s)/5; control: uniform behaviour policy")
    p.add_argument("--size", required=True, help="the dataset's name in the config (short, long)")
    p.config_option("--steps", "trajectories.{size}", type=integer_from(2), help="steps of the trajectory")
    p.config_option("--dynamics", "problem.dynamics", type=json_arg, help="JSON of the dynamics (sde.Dynamics)")
    p.config_option("--seed", "seed", type=integer_from(0), help="the master seed")
    p.add_argument("--out-dir", required=True, help="the dataset's folder (data/trajectories/ours/<task>/<size>)")
    args = p.parse_args()
    dynamics = build(Dynamics, args.dynamics, "config 'problem.dynamics'")
    rng = seeding.numpy_rng(args.seed, "dataset", args.task, args.size)
    start = time.perf_counter()
    traj = sample_trajectory(POLICY_OF_TASK[args.task], args.steps, dynamics, rng)
    print(f"sampled {args.steps} steps of the {args.task} policy in {time.perf_counter() - start:.1f} s")
    params = {"task": args.task, "size": args.size, "steps": args.steps, "dynamics": args.dynamics,
              "policy": POLICY_OF_TASK[args.task], "stream": ["dataset", args.task, args.size]}
    save_trajectory(args.out_dir, traj, provenance(params, args.seed, {}))


if __name__ == "__main__":
    run(main)
