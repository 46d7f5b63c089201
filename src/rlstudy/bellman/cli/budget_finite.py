"""The error budget's third part: the network minimising one estimator's sampled residual on the
study's own trajectory (budget/sampled.py, SampledResidual: mean(j j^)/2 over every transition the estimator may
use, UR's second next states drawn once from the "sampling"/"budget" stream), by full-batch L-BFGS
in float64 from the reach fit's network (--start). The network is evaluated on grid(--points) and
interpolated at each state; the loss is then recomputed with the network at every state itself
(loss_direct in error.csv) and the step fails if the two differ by more than 1e-6 of the loss's scale.

Writes q.pt, error.csv (one row) and fit.csv (the loss per chunk of iterations)."""

from __future__ import annotations

from rlstudy.bellman.budget.lbfgs import minimise
from rlstudy.bellman.budget.sampled import SampledResidual
from rlstudy.bellman.budget import steps as common
from rlstudy.bellman.data.trajectories import load_trajectory, trajectory_paths
from rlstudy.bellman.numerics import NUMERICS
from rlstudy.bellman.numerics.compiled.qnet import load_network
from rlstudy.bellman.problem.sde import Problem
from rlstudy.core import seeding
from rlstudy.core.cli import integer_from, parser, run, setup_torch
from rlstudy.core.errors import PipelineError


INTERPOLATION_TOLERANCE = 1e-4  # of mean(j^2)/2


def main() -> None:
    p = parser(__doc__)
    common.add_common(p, "grid the network is evaluated on and interpolated from")
    common.add_residual_options(p)
    p.add_argument("--trajectory", required=True, help="folder of the short trajectory")
    p.config_option("--max-transitions", "budget.max_transitions", type=integer_from(0),
                    help="transitions used, evenly spaced (0: every one)")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.config_option("--numerics", "numerics", choices=NUMERICS,
                    help="the loss's backend: compiled (budget_kernel.py), or reference (autograd through "
                         "numerics/reference.py's residuals)")
    args = p.parse_args()
    setup_torch("cpu")
    settings = common.fit_settings(args.fit, "budget.finite_fit")
    problem = Problem.from_config(args.problem)
    exact_q, weights = common.load_inputs(args)
    data = load_trajectory(args.trajectory, problem.dynamics)
    start = load_network(args.start, "the start network")
    rng = seeding.numpy_rng(args.seed, "sampling", "budget", args.task, args.estimator)
    objective = SampledResidual(data.states, data.action_indices, data.rewards, args.task, args.estimator, problem,
                                rng, args.points, args.ur_action, args.max_transitions,
                                args.numerics)
    fit = minimise(objective.loss, start, settings, f"finite data {args.task} {args.estimator}")
    direct = objective.direct_loss(fit.theta)
    interpolated, scale = fit.history[-1]["loss"], objective.residual_scale(fit.theta)
    # linear interpolation moves the loss by O(h^2): 1e-4 of the residuals' size is far below what the
    # budget resolves (1 % of a distance), and a coarser grid than the shipped one would exceed it
    if abs(direct - interpolated) > INTERPOLATION_TOLERANCE * scale:
        raise PipelineError(f"the interpolated loss {interpolated:.9g} is {abs(direct - interpolated):.3g} from the "
                            f"loss at the states themselves ({direct:.9g}): raise --points")
    keys = {"task": args.task, "estimator": args.estimator, "part": "finite_data"}
    params = {"points": args.points, "fit": args.fit, "ur_action": args.ur_action, "gamma": problem.gamma,
              "dynamics": args.problem["dynamics"], "max_transitions": args.max_transitions,
              "numerics": args.numerics}
    common.write_part(args, keys, fit, exact_q, weights, params, args.seed,
               common.inputs_of(args, start=args.start, **trajectory_paths(args.trajectory)),
               extra={"transitions": objective.transitions, "loss_direct": direct})


if __name__ == "__main__":
    run(main)
