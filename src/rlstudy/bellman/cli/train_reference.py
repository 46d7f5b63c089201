"""Train the reference Q* of a task by SGD on the long trajectory (the notebook: SGD-UR)."""

from __future__ import annotations

from pathlib import Path

from rlstudy.bellman.datasets import load_trajectory, trajectory_paths
from rlstudy.bellman.qnet import init_params, to_state_dict
from rlstudy.bellman.residuals import METHODS, TASKS, TrajectoryTensors
from rlstudy.bellman.sde import Dynamics
from rlstudy.bellman.sgd import SGDParams, train_sgd
from rlstudy.core import seeding
from rlstudy.core.cli import add_device_argument, build, device_record, integer_from, json_arg, parser, run, setup_torch
from rlstudy.core.io import ensure_writable, provenance, save_tensors


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--method", choices=METHODS, default="UR")
    p.add_argument("--trajectory", required=True, help="folder of the long trajectory")
    p.add_argument("--params", type=json_arg, required=True, help="JSON of sgd.SGDParams")
    p.add_argument("--dynamics", type=json_arg, required=True, help="JSON of sde.Dynamics")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--out", required=True, help="the .pt file of the network's state dict")
    add_device_argument(p)
    args = p.parse_args()
    device = setup_torch(args.device)
    params = build(SGDParams, args.params, "config 'reference'")
    dynamics = build(Dynamics, args.dynamics, "config 'dynamics'")
    data = load_trajectory(args.trajectory, dynamics)
    ensure_writable(Path(args.out).parent)
    traj = TrajectoryTensors.from_arrays(data.states, data.action_indices, data.rewards).to(device)
    stream = ("reference", args.task, args.method)
    theta0 = init_params(1, seeding.torch_generator(args.seed, "init", *stream))[0].to(device)
    theta, _ = train_sgd(theta0, traj, args.method, args.task, params, dynamics,
                         seeding.torch_generator(args.seed, "sampling", *stream), label=f"Q* {args.task}")
    record = provenance({"task": args.task, "method": args.method, "sgd": args.params, "dynamics": args.dynamics,
                         "device": device_record(args.device, device)},
                        args.seed, trajectory_paths(args.trajectory))
    save_tensors(args.out, to_state_dict(theta), record)


if __name__ == "__main__":
    run(main)
