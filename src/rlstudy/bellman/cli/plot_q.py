"""Render the four-panel Q figure of one task and optimiser from its runs (PNG and PDF). The legend
gives each final network's (and the learned Q*'s) centred error against the exact Q over the exact
Q's norm, uniform and weighted by the stationary density of the task's behaviour policy (--density:
where the data are; metrics.exact_scores); for control, also the greedy policies' exact scores
(bellman/problem/greedy.py)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pandas as pd

from rlstudy.bellman.results.error_curves import load_error_curves
from rlstudy.bellman.problem.exact import load_exact
from rlstudy.bellman.figures.q import plot_q_figure
from rlstudy.bellman.problem.greedy import GreedyJudge
from rlstudy.bellman.learners.metrics import GRID_POINTS, exact_scores, q_on_grid
from rlstudy.bellman.numerics.compiled.qnet import load_network
from rlstudy.bellman.problem.sde import TASKS, Problem
from rlstudy.bellman.problem.stationary import load_density
from rlstudy.core.cli import finite_float, json_arg, parser, run
from rlstudy.plotting import style

EXACT_POINTS_DRAWN = 200  # every grid solve_exact writes has a multiple of 100 points, doubled at least once


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--setting", required=True, help="the optimiser setting's name (sgd, cbo, cbo-adaptive, ...)")
    p.add_argument("--reference", required=True, help="the learned Q* state dict (.pt)")
    p.add_argument("--exact", required=True, help="the task's exact Q (q_exact.npy)")
    p.add_argument("--density", required=True,
                   help="the stationary density of the task's behaviour policy (stationary_density.npy)")
    p.add_argument("--reference-note", default="", help="how Q* was made, for the title")
    p.add_argument("--problem", type=json_arg, required=True,
                   help="JSON of the problem (sde.Problem) its runs assume: config 'problem' with the dataset's "
                        "dynamics (bellman.data.trajectories.dataset_dynamics), which the exact Q was solved for")
    p.add_argument("--runs", nargs="+", required=True, help="run folders, each with q.pt and errors.csv")
    p.config_option("--converged-below", "summary.converged_below", type=finite_float,
                    help="a run counts as converged when its final e_k/e_0 is at most this")
    style.add_output_options(p)
    args = p.parse_args()
    folders = sorted(args.runs)
    curves, networks = load_error_curves([Path(folder) / "errors.csv" for folder in folders]), defaultdict(list)
    for folder, curve in zip(folders, curves):
        networks[curve["estimator"].iloc[0]].append(load_network(Path(folder) / "q.pt", "a run's network"))
    data = style.DATASET_NAMES[curves[0]["dataset"].iloc[0]]
    title = (f"Q-{args.task}, {args.setting.upper()} on {data}"
             + (f"; {args.reference_note}" if args.reference_note else ""))
    problem = Problem.from_config(args.problem, "--problem")
    reference = load_network(args.reference, "reference Q*")
    exact = load_exact(args.exact, EXACT_POINTS_DRAWN)  # refuses a grid the metric's 100 points do not divide
    whole = load_exact(args.exact, None)
    density = load_density(args.density, GRID_POINTS)
    everyone = [("Q*", [reference]), *networks.items()]
    exact_errors = {estimator: [exact_scores(theta, whole, None, density) for theta in thetas]
                    for estimator, thetas in everyone}
    greedy = None
    if args.task == "control":
        judge = GreedyJudge.build(whole, problem.gamma, problem.dynamics)
        greedy = {estimator: [judge.score(q_on_grid(theta, judge.n).double().numpy()) for theta in thetas]
                  for estimator, thetas in everyone}
    fig = plot_q_figure(reference, exact, dict(networks), pd.concat(curves), title, args.converged_below, greedy,
                        exact_errors)
    style.save(fig, args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
