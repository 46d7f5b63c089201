"""Train the reference Q* of a task by SGD on the long trajectory (the notebook: SGD-UR).

Beside the network, errors.csv follows its training against the exact Q: at every iteration the
centred error `error_exact` and `error_exact_normalised`, the same divided by the exact Q's own
centred norm (0: exact, 1: as far as a flat Q).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from rlstudy.bellman.data.trajectories import load_trajectory, trajectory_paths
from rlstudy.bellman.problem.exact import load_exact
from rlstudy.bellman.learners.metrics import GRID_POINTS, ErrorMeter, centred_norm
from rlstudy.bellman.numerics.compiled.qnet import init_params, to_state_dict
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.bellman.numerics.compiled.residuals import TrajectoryTensors
from rlstudy.bellman.problem.sde import TASKS, Problem
from rlstudy.bellman.learners.sgd import SGDParams, train_sgd
from rlstudy.core import seeding
from rlstudy.core.cli import (
    add_device_argument,
    build,
    device_record,
    integer_from,
    json_arg,
    parser,
    run,
    setup_torch,
)
from rlstudy.core.atomic_writes import ensure_writable, save_csv, save_tensors
from rlstudy.core.provenance import provenance


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--estimator", choices=ESTIMATORS, required=True, help="config 'reference.estimator'")
    p.add_argument("--trajectory", required=True, help="folder of the long trajectory")
    p.add_argument("--params", type=json_arg, required=True, help="JSON of sgd.SGDParams")
    p.add_argument("--problem", type=json_arg, required=True, help="JSON of config 'problem' (dynamics, gamma)")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--exact", required=True, help="the task's exact Q (q_exact.npy)")
    p.add_argument("--out", required=True, help="the .pt file of the network's state dict")
    p.add_argument("--curve-out", required=True, help="errors.csv: the error against the exact Q while training")
    add_device_argument(p)
    args = p.parse_args()
    device = setup_torch(args.device)
    params = build(SGDParams, args.params, "config 'reference'")
    problem = Problem.from_config(args.problem)
    data = load_trajectory(args.trajectory, problem.dynamics)
    ensure_writable(Path(args.out).parent)
    traj = TrajectoryTensors.from_arrays(data.states, data.action_indices, data.rewards).to(device)
    stream = ("reference", args.task, args.estimator)
    theta0 = init_params(1, seeding.torch_generator(args.seed, "init", *stream))[0].to(device)
    exact = torch.from_numpy(load_exact(args.exact, GRID_POINTS)).to(device)
    theta, history = train_sgd(theta0, traj, args.estimator, args.task, params, problem,
                               seeding.torch_generator(args.seed, "sampling", *stream),
                               ErrorMeter({"error_exact": exact}), label=f"Q* {args.task}")
    curve = pd.DataFrame({"task": args.task, "iteration": range(len(history.error)), "lr": history.lr,
                          "evaluations": history.evaluations, **pd.DataFrame(history.error)})
    curve["error_exact_normalised"] = curve["error_exact"] / centred_norm(exact)
    print(f"Q* {args.task}: centred error against the exact Q {curve['error_exact_normalised'].iloc[-1]:.4g} "
          "of the exact Q's centred norm")
    # The record keeps its form of when config `reference` held its own gamma.
    record = provenance({"task": args.task, "estimator": args.estimator, "sgd": {**args.params, "gamma": problem.gamma},
                         "dynamics": args.problem["dynamics"],
                         "device": device_record(args.device, device)},
                        args.seed, {**trajectory_paths(args.trajectory), "exact": args.exact})
    save_tensors(args.out, to_state_dict(theta), record)
    save_csv(args.curve_out, curve, record)


if __name__ == "__main__":
    run(main)
