"""Fit Q on the short trajectory with one optimiser (SGD or CBO) and one residual (residuals.METHODS).

Writes the final network (for CBO, the consensus); the error curves with the network evaluations
spent so far (errors.csv: `error` against the learned Q*, the notebook's metric, `error_exact`
against the exact Q, and `rel_error*` each divided by the initial network's); and the wall time of
each iteration (wall_time.csv: the one output that differs between reruns, kept apart so that the
others stay byte-identical).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from rlstudy.bellman.cbo import CBOParams, initial_swarm, train_cbo
from rlstudy.bellman.datasets import load_trajectory, trajectory_paths
from rlstudy.bellman.exact import load_exact
from rlstudy.bellman.metrics import GRID_POINTS, ErrorMeter, q_on_grid
from rlstudy.bellman.qnet import init_params, load_network, to_state_dict
from rlstudy.bellman.residuals import METHODS, TASKS, TrajectoryTensors
from rlstudy.bellman.sde import Dynamics
from rlstudy.bellman.sgd import SGDParams, train_sgd
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
from rlstudy.core.io import ensure_writable, provenance, save_csv, save_tensors


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--optimizer", required=True, help="'sgd', or a CBO setting's name (cbo, cbo-...)")
    p.add_argument("--dataset", required=True, help="the dataset's name in tables and figures (ours, authors)")
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--method", choices=METHODS, required=True)
    p.add_argument("--run-seed", type=integer_from(0), required=True, help="the replicate's seed")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--trajectory", required=True, help="folder of the short trajectory")
    p.add_argument("--reference", required=True, help="the learned Q* state dict (.pt)")
    p.add_argument("--exact", required=True, help="the task's exact Q (q_exact.npy of solve_exact)")
    p.add_argument("--params", type=json_arg, required=True, help="JSON of SGDParams or CBOParams")
    p.add_argument("--dynamics", type=json_arg, required=True, help="JSON of sde.Dynamics")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--stop-on-divergence", action="store_true",
                   help="CBO: end a diverging run at its last finite consensus instead of failing (sweeps)")
    add_device_argument(p)
    args = p.parse_args()
    device = setup_torch(args.device)
    dynamics = build(Dynamics, args.dynamics, "config 'dynamics'")
    data = load_trajectory(args.trajectory, dynamics)
    traj = TrajectoryTensors.from_arrays(data.states, data.action_indices, data.rewards).to(device)
    exact = torch.from_numpy(load_exact(args.exact, GRID_POINTS)).to(device)
    meter = ErrorMeter({"error": q_on_grid(load_network(args.reference, "reference Q*").to(device)),
                        "error_exact": exact})
    ensure_writable(args.out_dir)  # before the training, not after it
    init = seeding.torch_generator(args.seed, "init", args.task, args.optimizer, str(args.run_seed))
    sampling = seeding.torch_generator(args.seed, "sampling", args.task, args.optimizer, args.method,
                                       str(args.run_seed))
    label = f"{args.optimizer} {args.method} {args.task} seed {args.run_seed}"
    if args.optimizer == "sgd":
        params = build(SGDParams, args.params, "config 'sgd'")
        theta, history = train_sgd(init_params(1, init)[0].to(device), traj, args.method, args.task, params,
                                   dynamics, sampling, meter, label)
        columns = {"lr": history.lr, "loss": history.loss}
    else:
        params = build(CBOParams, args.params, f"config 'cbo.settings.{args.optimizer}'")
        swarm = initial_swarm(params, init, float(np.nanmean(data.rewards))).to(device)
        theta, history = train_cbo(swarm, traj, args.method, args.task, params, dynamics, sampling, meter, label,
                                   stop_on_divergence=args.stop_on_divergence)
        columns = {"loss": history.loss, "ess": history.ess, "beta": history.beta,
                   "spread": history.spread, "diverged": history.diverged_at is not None}
    keys = {"dataset": args.dataset, "task": args.task, "optimizer": args.optimizer, "method": args.method,
            "seed": args.run_seed}
    iterations = np.arange(len(history.error))
    errors = pd.DataFrame(history.error)
    relative = {f"rel_{name}": errors[name] / errors[name].iloc[0] for name in errors}
    curve = pd.DataFrame({**keys, "iteration": iterations, "evaluations": history.evaluations, **errors,
                          **relative, **columns})
    print(f"{label}: e_k/e_0 final {curve['rel_error'].iloc[-1]:.4g} against the learned Q*, "
          f"{curve['rel_error_exact'].iloc[-1]:.4g} against the exact Q, after {len(curve) - 1} iterations")
    record = provenance({**keys, "params": args.params, "dynamics": args.dynamics,
                         "device": device_record(args.device, device)},
                        args.seed, {**trajectory_paths(args.trajectory), "reference": args.reference, "exact": args.exact})
    out = Path(args.out_dir)
    save_tensors(out / "q.pt", to_state_dict(theta), record)
    save_csv(out / "errors.csv", curve, record)
    save_csv(out / "diagnostics.csv", history.diagnostics, record)
    save_csv(out / "wall_time.csv", pd.DataFrame({**keys, "iteration": iterations, "seconds": history.seconds}),
             record)


if __name__ == "__main__":
    run(main)
