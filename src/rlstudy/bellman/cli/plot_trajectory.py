"""Render the trajectory diagnostics of one dataset (PNG and PDF), with the stationary density of its
behaviour policy under the states' histogram when --density is given."""

from __future__ import annotations

from rlstudy.bellman.data.trajectories import load_trajectory
from rlstudy.bellman.figures.trajectory import plot_trajectory_figure
from rlstudy.bellman.problem.sde import POLICY_OF_TASK, TASKS
from rlstudy.bellman.problem.stationary import load_density
from rlstudy.core.cli import parser, run
from rlstudy.plotting import style


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--trajectory", required=True)
    p.add_argument("--density", help="the behaviour policy's stationary density (stationary_density.npy)")
    style.add_output_options(p)
    args = p.parse_args()
    traj = load_trajectory(args.trajectory)
    title = (f"{args.task} trajectory: {len(traj):,} steps of the {POLICY_OF_TASK[args.task]} policy "
             f"({args.trajectory})")
    density = load_density(args.density, None) if args.density else None
    style.save(plot_trajectory_figure(traj, title, density), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
