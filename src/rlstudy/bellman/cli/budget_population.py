"""The error budget's second part: the network minimising one estimator's Bellman residual in
expectation (budget.PopulationResidual: grid(--points) weighted by --weights, uniform when absent,
each action by the behaviour policy; the exact kernel by FFT; no sampling noise), from the reach
fit's network (--start), by full-batch L-BFGS in float64.

Writes q.pt, error.csv (one row: its errors against the exact Q, its final loss, whether the loss
stopped moving) and fit.csv (the loss per chunk of iterations). A loss that keeps falling (an
objective unbounded below, as BFF's can be) shows as converged False."""

from __future__ import annotations

from rlstudy.bellman.budget import UR_ACTIONS, PopulationResidual, minimise
from rlstudy.bellman.cli.budget_common import add_common, fit_settings, inputs_of, load_inputs, write_part
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.bellman.qnet import load_network
from rlstudy.bellman.sde import Problem
from rlstudy.core.cli import json_arg, parser, run, setup_torch


def main() -> None:
    p = parser(__doc__)
    add_common(p, "grid of the population residual")
    p.add_argument("--estimator", choices=ESTIMATORS, required=True)
    p.add_argument("--problem", type=json_arg, required=True, help="JSON of config 'problem' (dynamics, gamma)")
    p.add_argument("--ur-action", choices=UR_ACTIONS, default="recorded", help="UR's second next state's action")
    p.add_argument("--start", required=True, help="the network the fit starts from (the reach fit's q.pt)")
    args = p.parse_args()
    setup_torch("cpu")
    settings = fit_settings(args.fit, "budget.fit")
    problem = Problem.from_config(args.problem)
    exact_q, weights = load_inputs(args)
    start = load_network(args.start, "the start network")
    objective = PopulationResidual(args.task, args.estimator, problem, args.points, weights, args.ur_action)
    fit = minimise(objective.loss, start, settings, f"population {args.task} {args.estimator}")
    keys = {"task": args.task, "estimator": args.estimator, "part": "population"}
    params = {"points": args.points, "fit": args.fit, "ur_action": args.ur_action, "gamma": problem.gamma,
              "dynamics": args.problem["dynamics"]}
    write_part(args, keys, fit, exact_q, weights, params, None, inputs_of(args, start=args.start))


if __name__ == "__main__":
    run(main)
