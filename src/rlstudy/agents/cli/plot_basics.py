"""Figures of one basics agent: its learning curve over seeds, its training diagnostics (every
seed, the failing ones dashed), its value/policy maps (DQN: the max-Q landscape) with a greedy
rollout of the first seed's model, and that rollout as a GIF."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from matplotlib.patches import Rectangle

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # classic-control renders through pygame: no display here

from rlstudy.agents import figures  # noqa: E402
from rlstudy.agents.episodes import load_evaluation, load_returns  # noqa: E402
from rlstudy.agents.registry import AGENTS  # noqa: E402
from rlstudy.agents.rollout import greedy_rollout, save_gif  # noqa: E402
from rlstudy.agents.tabular import Grid  # noqa: E402
from rlstudy.core import seeding  # noqa: E402
from rlstudy.core.cli import finite_float, integer_from, json_arg, parser, run, setup_torch  # noqa: E402
from rlstudy.core.io import load_csv  # noqa: E402
from rlstudy.plotting import style  # noqa: E402
from rlstudy.plotting.curves import evaluation_label  # noqa: E402
from rlstudy.plotting.diagnostics_figure import DiagnosticsRun, diagnostics_figure  # noqa: E402

from .train_agent import agent_params  # noqa: E402


def run_seed(folder: Path) -> int:
    return int(folder.name.removeprefix("seed"))


def value_figure(agent, model, env, params, observations: np.ndarray, title: str):
    """The agent's maps with the rollout's states drawn on them."""
    if agent.name in ("qtable", "linear_q"):
        grid = Grid.of(params)
        xs, ys, panels = figures.grid_panels(grid, agent.table(model))
        return figures.maps_figure(xs, ys, panels, ("position", "velocity"), title, grid.centre(observations))
    if agent.name == "dqn":
        space = env.observation_space
        xs, ys, panel = figures.dqn_max_q_panel(model, space.low, space.high)
        fig = figures.maps_figure(xs, ys, [panel], ("cart position", "pole angle (rad)"), title)
        # The notebook's map spans the observation bounds, twice the limits at which an episode ends:
        # outside the box the network never saw a state, and its values there are extrapolation.
        x_end, angle_end = env.unwrapped.x_threshold, env.unwrapped.theta_threshold_radians
        fig.axes[0].add_patch(Rectangle((-x_end, -angle_end), 2 * x_end, 2 * angle_end, fill=False, color="w",
                                        linestyle="--", label="episode continues"))
        fig.axes[0].legend(loc="upper left", fontsize=8)
        return fig
    xs, ys, panels = figures.pendulum_panels(model, float(env.observation_space.high[2]))
    angles = np.arctan2(observations[:, 1], observations[:, 0])
    trajectory = figures.break_at_wraps(angles, observations[:, 2])
    return figures.maps_figure(xs, ys, panels, ("angle (rad)", "angular velocity"), title, trajectory)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--agent", choices=sorted(AGENTS), required=True)
    p.add_argument("--env", required=True)
    p.add_argument("--params", type=json_arg, required=True, help="JSON of the agent's parameters")
    p.add_argument("--runs", nargs="+", required=True, help="run folders seed<N>, each with returns.csv, "
                                                           "evaluation.csv, diagnostics.csv and the model")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--solved-return", type=finite_float, required=True,
                   help="config <agent>.solved_return: a seed whose mean greedy return is below it is marked failing")
    p.add_argument("--rollout-steps", type=integer_from(1), default=100)
    p.add_argument("--out-dir", required=True, help="figures/agents: <agent>_*.<fmt> and <agent>_rollout.gif")
    p.add_argument("--formats", nargs="+", default=["png", "pdf"])
    p.add_argument("--dpi", type=integer_from(1), default=150)
    args = p.parse_args()
    setup_torch("cpu")
    agent = AGENTS[args.agent]
    params = agent_params(agent, args.params)
    runs = sorted((Path(r) for r in args.runs), key=run_seed)
    out = Path(args.out_dir)

    curves = [load_returns(r / "returns.csv", f"{agent.name} training returns") for r in runs]
    evaluations = [load_evaluation(r / "evaluation.csv", f"{agent.name} evaluation")["return"].mean() for r in runs]
    x = "episode" if agent.name in ("qtable", "linear_q") else "step"  # the deep agents' budgets are steps
    window = max(1, min(len(c) for c in curves) // 40)
    title = (f"{agent.name} on {args.env}, greedy evaluation by seed:\n"
             + ", ".join(evaluation_label(r.name, e, args.solved_return) for r, e in zip(runs, evaluations)))
    style.save(figures.learning_curve_figure({agent.name: curves}, x, window, title, args.solved_return),
               out / f"{agent.name}_learning_curve", args.formats, args.dpi)
    diagnostics = [DiagnosticsRun(evaluation_label(r.name, e, args.solved_return),
                                  load_csv(r / "diagnostics.csv", f"{agent.name} diagnostics"), e < args.solved_return)
                   for r, e in zip(runs, evaluations)]
    style.save(diagnostics_figure(diagnostics, x, "episode" if x == "episode" else "environment steps",
                                  f"{agent.name} on {args.env}: training diagnostics, every seed "
                                  f"(greedy evaluation return in the legend)"),
               out / f"{agent.name}_diagnostics", args.formats, args.dpi)

    first = runs[0]
    env = agent.make_env(args.env, params, render_mode="rgb_array")
    model = agent.load(first / agent.model_file, env, params)
    rollout_seed = seeding.stream_seed(args.seed, agent.name, str(run_seed(first)), "rollout")
    frames, observations, rewards = greedy_rollout(env, agent.policy(model), rollout_seed, args.rollout_steps)
    print(f"greedy rollout of {first}: {len(rewards)} steps, return {rewards.sum():.1f}")
    name = "dqn_max_q" if agent.name == "dqn" else f"{agent.name}_value_policy"
    drawn = "" if agent.name == "dqn" else " (red)"  # the max-Q slice at zero velocities has no path to draw
    title = f"{agent.name} on {args.env}, {first.name}; greedy rollout{drawn}: {len(rewards)} steps, return {rewards.sum():.1f}"
    style.save(value_figure(agent, model, env, params, observations, title), out / name, args.formats, args.dpi)
    fps = max(1, round(env.metadata.get("render_fps", 30) / getattr(params, "action_repeat", 1)))
    every = 1 if len(frames) <= 100 else 2  # keeps long rollouts' GIFs small
    save_gif(out / f"{agent.name}_rollout.gif", frames, fps=max(1, fps // every), every=every,
             record=style.figure_record(rollout_seed=rollout_seed, steps=args.rollout_steps))


if __name__ == "__main__":
    run(main)
