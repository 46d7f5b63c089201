"""The error budget's second part: the network minimising one estimator's Bellman residual in
expectation (budget/population.py, PopulationResidual: grid(--points) weighted by --weights, uniform when absent,
each action by the behaviour policy; the exact kernel by FFT; no sampling noise), from the reach
fit's network (--start), by full-batch L-BFGS in float64.

Writes q.pt, error.csv (one row: its errors against the exact Q, its final loss, whether the loss
stopped moving) and fit.csv (the loss per chunk of iterations). A loss that keeps falling (an
objective unbounded below, as BFF's can be) shows as converged False."""

from __future__ import annotations

from rlstudy.bellman.budget.lbfgs import minimise
from rlstudy.bellman.budget.population import PopulationResidual
from rlstudy.bellman.budget import steps as common
from rlstudy.bellman.numerics.compiled.qnet import load_network
from rlstudy.bellman.problem.sde import Problem
from rlstudy.core.cli import parser, run, setup_torch


def main() -> None:
    p = parser(__doc__)
    common.add_common(p, "grid of the population residual")
    common.add_residual_options(p)
    args = p.parse_args()
    setup_torch("cpu")
    settings = common.fit_settings(args.fit, "budget.fit")
    problem = Problem.from_config(args.problem)
    exact_q, weights = common.load_inputs(args)
    start = load_network(args.start, "the start network")
    objective = PopulationResidual(args.task, args.estimator, problem, args.points, weights, args.ur_action)
    fit = minimise(objective.loss, start, settings, f"population {args.task} {args.estimator}")
    keys = {"task": args.task, "estimator": args.estimator, "part": "population"}
    params = {"points": args.points, "fit": args.fit, "ur_action": args.ur_action, "gamma": problem.gamma,
              "dynamics": args.problem["dynamics"]}
    common.write_part(args, keys, fit, exact_q, weights, params, None, common.inputs_of(args, start=args.start))


if __name__ == "__main__":
    run(main)
