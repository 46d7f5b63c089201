"""What the error budget's steps share (bellman/budget/): their common options and how a part's
fit is written (q.pt, error.csv: one row, fit.csv: the loss per chunk of L-BFGS iterations)."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from rlstudy.bellman.budget.lbfgs import FitSettings
from rlstudy.bellman.budget.population import UR_ACTIONS
from rlstudy.bellman.budget.tables import load_weights, part_table
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.bellman.problem.exact import load_exact
from rlstudy.bellman.numerics.compiled.qnet import to_state_dict
from rlstudy.bellman.problem.sde import TASKS
from rlstudy.core.cli import StepParser, build, integer_from, json_arg
from rlstudy.core.atomic_writes import ensure_writable, save_csv, save_tensors
from rlstudy.core.provenance import provenance


def add_common(p: argparse.ArgumentParser, points_help: str) -> None:
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--exact", required=True, help="the task's exact Q (q_exact.npy of solve_exact)")
    p.add_argument("--points", type=integer_from(16), required=True, help=points_help)
    p.add_argument("--fit", type=json_arg, required=True,
                   help="JSON of the L-BFGS settings: max_iterations, chunk, rtol (config 'budget.fit')")
    p.add_argument("--weights", help="optional weights over a grid of the circle (.npy, 1-d): the states' "
                                     "stationary density; uniform when absent")
    p.add_argument("--out-dir", required=True)


def add_residual_options(p: StepParser) -> None:
    """The options of the steps that minimise a residual (population, finite data)."""
    p.add_argument("--estimator", choices=ESTIMATORS, required=True)
    p.add_argument("--problem", type=json_arg, required=True, help="JSON of config 'problem' (dynamics, gamma)")
    p.config_option("--ur-action", "budget.ur_action", choices=UR_ACTIONS, help="UR's second next state's action")
    p.add_argument("--start", required=True, help="the network the fit starts from (the reach fit's q.pt)")


def fit_settings(values: dict, key: str) -> FitSettings:
    return build(FitSettings, values, f"--fit (config '{key}')")


def load_inputs(args):
    """The exact Q (its whole grid) and the optional weights, checked before any fit."""
    exact_q = load_exact(args.exact, None)
    weights = load_weights(args.weights)
    ensure_writable(args.out_dir)
    return exact_q, weights


def inputs_of(args, **more) -> dict:
    inputs = {"exact": args.exact, **more}
    if args.weights:
        inputs["weights"] = args.weights
    return {name: path for name, path in inputs.items() if path is not None}


def write_part(args, keys: dict, fit, exact_q, weights, params: dict, seed, inputs: dict, extra=None) -> None:
    row, history = part_table(keys, fit, exact_q, weights, extra)
    print(row.to_string(index=False))
    if not fit.converged:
        print(f"note: the loss still moved after {fit.history[-1]['iterations']} iterations (converged: False)")
    record = provenance({**keys, **params, "weights": args.weights or "uniform"}, seed, inputs)
    out = Path(args.out_dir)
    save_tensors(out / "q.pt", to_state_dict(fit.theta.to(torch.float32)), record)
    save_csv(out / "error.csv", row, record)
    save_csv(out / "fit.csv", history, record)
