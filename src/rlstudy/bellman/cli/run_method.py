"""Fit Q on the short trajectory with one optimiser setting (optimizers.OPTIMIZERS) and one residual
estimator (estimators.ESTIMATORS).

Writes the final network (for CBO, the consensus); the error curves with the network evaluations
spent so far (errors.csv: `error` against the learned Q*, the notebook's metric, `error_exact`
against the exact Q, and `rel_error*` each divided by the initial network's); and the wall time of
each iteration (wall_time.csv: the one output that differs between reruns, kept apart so that the
others stay byte-identical). Their columns and provenance name the run: `setting` holds the setting's
name (sgd, cbo, cbo-adaptive, ...), `estimator` the residual estimator's (DS, UR, BFF, ...).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from rlstudy.bellman.data.trajectories import dataset_dynamics, load_trajectory, trajectory_paths
from rlstudy.bellman.problem.exact import load_exact
from rlstudy.bellman.learners.metrics import GRID_POINTS, ErrorMeter, q_on_grid
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.bellman.numerics import NUMERICS
from rlstudy.bellman.learners.registry import OPTIMIZERS, Run, all_settings
from rlstudy.bellman.numerics.compiled.qnet import load_network, to_state_dict
from rlstudy.bellman.numerics.compiled.residuals import TrajectoryTensors
from rlstudy.bellman.problem.sde import TASKS, Problem
from rlstudy.core import seeding
from rlstudy.core.cli import (
    FILL_FROM_CONFIG,
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


def setting_optimizer(config: dict, args) -> str:
    """the optimiser whose section holds setting <setting> (sgd, cbo)"""
    return all_settings(config)[args.setting].optimizer


def setting_params(config: dict, args) -> dict:
    """the parameters of setting <setting> for <task> (sgd.<task>, cbo.settings.<setting>.params...)"""
    return all_settings(config)[args.setting].params[args.task]


def dataset_problem(config: dict, args) -> dict:
    """problem, with the dynamics of <dataset> (the authors': reward_of current)"""
    return {"dynamics": dataset_dynamics(config, args.dataset), "gamma": config["problem"]["gamma"]}


def main() -> None:
    p = parser(__doc__ + "\nThe workflow's rule run_method (workflow/rules/methods.smk) runs it for each dataset, task,\n"
               "setting, estimator and seed, every option marked 'config' taken from the config.\n")
    p.add_argument("--setting", required=True,
                   help="the setting's name: labels the run and seeds its streams (sgd, cbo, cbo-adaptive, ...)")
    p.add_argument("--dataset", required=True, help="the dataset's name in tables and figures (ours, authors)")
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--estimator", choices=ESTIMATORS, required=True, help="the residual estimator")
    p.add_argument("--run-seed", type=integer_from(0), required=True,
                   help="the replicate's seed: N of the run folder .../seed<N> (the workflow runs the setting's seeds)")
    p.config_option("--optimizer", setting_optimizer, choices=OPTIMIZERS, help="the optimiser (optimizers.OPTIMIZERS)")
    p.config_option("--seed", "seed", type=integer_from(0), help="the master seed")
    p.add_argument("--trajectory", required=True, help="folder of the short trajectory (data/trajectories/<dataset>/<task>/short)")
    p.add_argument("--reference", required=True,
                   help="the learned Q* state dict (.pt): results/reference/<task>/q_star.pt, or the authors' for their control data")
    p.add_argument("--exact", required=True,
                   help="the task's exact Q: results/exact/<task>/reward_<reward_of>/q_exact.npy (solve_exact)")
    p.config_option("--params", setting_params, type=json_arg, help="JSON of the optimiser's parameter dataclass")
    p.config_option("--problem", dataset_problem, type=json_arg, help="JSON of the problem (dynamics, gamma)")
    p.add_argument("--out-dir", required=True, help="the run folder (results/runs/<dataset>/<task>/<setting>/<estimator>/seed<N>)")
    p.add_argument("--stop-on-divergence", action="store_true",
                   help="end a diverging run at its last finite iterate instead of failing (CBO's sweeps)")
    p.config_option("--numerics", "numerics", choices=NUMERICS,
                    help="the backend of the optimiser's numerics (numerics/__init__.py): compiled, the study's, or "
                         "reference, plain PyTorch with autograd (slower, the same within float32 rounding)")
    add_device_argument(p)
    args = p.parse_args()
    device = setup_torch(args.device)
    optimizer = OPTIMIZERS[args.optimizer]
    problem = Problem.from_config(args.problem)
    params = build(optimizer.params, args.params, f"config '{optimizer.params_key.format(setting=args.setting)}'",
                   fill=FILL_FROM_CONFIG)
    data = load_trajectory(args.trajectory, problem.dynamics)
    traj = TrajectoryTensors.from_arrays(data.states, data.action_indices, data.rewards).to(device)
    exact = torch.from_numpy(load_exact(args.exact, GRID_POINTS)).to(device)
    meter = ErrorMeter({"error": q_on_grid(load_network(args.reference, "reference Q*").to(device)),
                        "error_exact": exact})
    ensure_writable(args.out_dir)  # before the training, not after it
    inputs = Run(traj, ESTIMATORS[args.estimator], args.task, problem,
                 init=seeding.torch_generator(args.seed, "init", args.task, args.setting, str(args.run_seed)),
                 sampling=seeding.torch_generator(args.seed, "sampling", args.task, args.setting, args.estimator,
                                                  str(args.run_seed)),
                 meter=meter, label=f"{args.setting} {args.estimator} {args.task} seed {args.run_seed}",
                 mean_reward=float(np.nanmean(data.rewards)), device=device,
                 stop_on_divergence=args.stop_on_divergence, numerics=args.numerics)
    fit = optimizer.fit(params, inputs)
    theta, history, label = fit.theta, fit.history, inputs.label
    keys = {"dataset": args.dataset, "task": args.task, "setting": args.setting, "estimator": args.estimator,
            "seed": args.run_seed}
    iterations = np.arange(len(history.error))
    errors = pd.DataFrame(history.error)
    relative = {f"rel_{name}": errors[name] / errors[name].iloc[0] for name in errors}
    curve = pd.DataFrame({**keys, "iteration": iterations, "evaluations": history.evaluations, **errors,
                          **relative, **fit.columns})
    print(f"{label}: e_k/e_0 final {curve['rel_error'].iloc[-1]:.4g} against the learned Q*, "
          f"{curve['rel_error_exact'].iloc[-1]:.4g} against the exact Q, after {len(curve) - 1} iterations")
    # The record gives the parameters with the problem's discount beside them: the optimiser's
    # settings as they act on this problem.
    record = provenance({**keys, "params": {**args.params, "gamma": problem.gamma},
                         "dynamics": args.problem["dynamics"],
                         "device": device_record(args.device, device), "numerics": args.numerics},
                        args.seed, {**trajectory_paths(args.trajectory), "reference": args.reference, "exact": args.exact})
    out = Path(args.out_dir)
    save_tensors(out / "q.pt", to_state_dict(theta), record)
    save_csv(out / "errors.csv", curve, record)
    save_csv(out / "diagnostics.csv", history.diagnostics, record)
    save_csv(out / "wall_time.csv", pd.DataFrame({**keys, "iteration": iterations, "seconds": history.seconds}),
             record)


if __name__ == "__main__":
    run(main)
