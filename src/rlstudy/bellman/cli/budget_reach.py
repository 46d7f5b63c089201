"""The error budget's first part, the network's reach: the study's network fitted to the exact Q by
regression on a grid (mean squared distance on grid(--points), full batch, L-BFGS in float64, from the
seeded initialisation of the "init"/"budget" stream) and its error under the study's metric. With
--fit-weights the squares are weighted by --weights (part reach_weighted: the reach where the data are),
started from --start (the uniform reach's network: the weighted loss's conditioning follows the
density's range, and a fit from the seeded draw can stop farther from the truth where the data are
than the uniform fit it should improve on).

Writes q.pt (the network), error.csv (one row: its errors against the exact Q, uniform and, with
--weights, weighted) and fit.csv (the loss per chunk of iterations)."""

from __future__ import annotations

from rlstudy.bellman.budget.lbfgs import minimise
from rlstudy.bellman.budget.reach import regression_loss
from rlstudy.bellman.budget.steps import add_common, fit_settings, inputs_of, load_inputs, write_part
from rlstudy.bellman.numerics.compiled.qnet import init_params, load_network
from rlstudy.core import seeding
from rlstudy.core.cli import integer_from, parser, run, setup_torch
from rlstudy.core.errors import InputError


def main() -> None:
    p = parser(__doc__)
    add_common(p, "grid of the regression (the exact Q is read at its points)")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--fit-weights", action="store_true",
                   help="weight the regression by --weights (part reach_weighted); else every point alike (reach)")
    p.add_argument("--start", help="the network the fit starts from (q.pt); else the seeded initialisation")
    args = p.parse_args()
    setup_torch("cpu")
    settings = fit_settings(args.fit, "budget.fit")
    exact_q, weights = load_inputs(args)
    if args.fit_weights and weights is None:
        raise InputError("--fit-weights needs --weights (config budget.weights: stationary)")
    part = "reach_weighted" if args.fit_weights else "reach"
    if args.start:
        theta0 = load_network(args.start, "the network the reach starts from")
    else:
        theta0 = init_params(1, seeding.torch_generator(args.seed, "init", "budget", args.task))[0]
    loss = regression_loss(exact_q, args.points, weights if args.fit_weights else None)
    fit = minimise(loss, theta0, settings, f"{part} {args.task}")
    keys = {"task": args.task, "estimator": "any", "part": part}
    write_part(args, keys, fit, exact_q, weights, {"points": args.points, "fit": args.fit}, args.seed,
               inputs_of(args, start=args.start))


if __name__ == "__main__":
    run(main)
