"""Render the trajectory diagnostics of one dataset (PNG and PDF), with the stationary density of its
behaviour policy under the states' histogram when --density is given."""

from __future__ import annotations

from rlstudy.bellman.datasets import load_trajectory
from rlstudy.bellman.figures.trajectory import plot_trajectory_figure
from rlstudy.bellman.residuals import POLICY_OF_TASK, TASKS
from rlstudy.bellman.stationary import load_density
from rlstudy.core.cli import integer_from, parser, run
from rlstudy.plotting import style


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--trajectory", required=True)
    p.add_argument("--density", help="the behaviour policy's stationary density (stationary_density.npy)")
    p.add_argument("--out-prefix", required=True, help="written as <prefix>.png and <prefix>.pdf")
    p.add_argument("--formats", nargs="+", default=["png", "pdf"])
    p.add_argument("--dpi", type=integer_from(1), default=150)
    args = p.parse_args()
    traj = load_trajectory(args.trajectory)
    title = (f"{args.task} trajectory: {len(traj):,} steps of the {POLICY_OF_TASK[args.task]} policy "
             f"({args.trajectory})")
    density = load_density(args.density, None) if args.density else None
    style.save(plot_trajectory_figure(traj, title, density), args.out_prefix, args.formats, args.dpi)


if __name__ == "__main__":
    run(main)
