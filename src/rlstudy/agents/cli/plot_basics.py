"""Figures of one basics agent: its learning curve over seeds, its training diagnostics (every
seed, the failing ones dashed), its value/policy maps (DQN: the max-Q landscape) with a greedy
rollout of the first seed's model, and that rollout as a GIF."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # classic-control renders through pygame: no display here

from rlstudy.agents import figures  # noqa: E402
from rlstudy.agents.episodes import load_evaluation, load_returns  # noqa: E402
from rlstudy.agents.registry import BASICS, agent_params, build_agent  # noqa: E402
from rlstudy.agents.rollout import greedy_rollout, save_gif  # noqa: E402
from rlstudy.core import seeding  # noqa: E402
from rlstudy.core.cli import finite_float, integer_from, json_arg, parser, run, setup_torch  # noqa: E402
from rlstudy.core.loaders import load_csv  # noqa: E402
from rlstudy.plotting import style  # noqa: E402
from rlstudy.plotting.curves import evaluation_label  # noqa: E402
from rlstudy.plotting.diagnostics_figure import DiagnosticsRun, diagnostics_figure  # noqa: E402


def run_seed(folder: Path) -> int:
    return int(folder.name.removeprefix("seed"))


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--agent", choices=sorted(BASICS), required=True)
    p.add_argument("--env", required=True)
    p.add_argument("--params", type=json_arg, required=True, help="JSON of the agent's parameters")
    p.add_argument("--runs", nargs="+", required=True, help="run folders seed<N>, each with returns.csv, "
                                                           "evaluation.csv, diagnostics.csv and the model")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--solved-return", type=finite_float, required=True,
                   help="config <agent>.solved_return: a seed whose mean greedy return is below it is marked failing")
    p.config_option("--rollout-steps", "{agent}.rollout_steps", type=integer_from(1), help="steps of the rollout GIF")
    p.add_argument("--out-dir", required=True, help="figures/agents: <agent>_*.<fmt> and <agent>_rollout.gif")
    style.add_format_options(p)
    args = p.parse_args()
    setup_torch("cpu")
    agent = build_agent(args.agent)
    params = agent_params(agent, args.params)
    runs = sorted((Path(r) for r in args.runs), key=run_seed)
    out = Path(args.out_dir)

    curves = [load_returns(r / "returns.csv", f"{agent.name} training returns") for r in runs]
    evaluations = [load_evaluation(r / "evaluation.csv", f"{agent.name} evaluation")["return"].mean() for r in runs]
    x = agent.curve_x
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
    value_map = figures.VALUE_MAPS[agent.value_map]
    drawn = " (red)" if value_map.draws_rollout else ""
    title = f"{agent.name} on {args.env}, {first.name}; greedy rollout{drawn}: {len(rewards)} steps, return {rewards.sum():.1f}"
    style.save(value_map.draw(agent, model, env, params, observations, title), out / agent.value_figure_name,
               args.formats, args.dpi)
    fps = max(1, round(env.metadata.get("render_fps", 30) / getattr(params, "action_repeat", 1)))
    every = 1 if len(frames) <= 100 else 2  # keeps long rollouts' GIFs small
    save_gif(out / f"{agent.name}_rollout.gif", frames, fps=max(1, fps // every), every=every,
             record=style.figure_record(rollout_seed=rollout_seed, steps=args.rollout_steps))


if __name__ == "__main__":
    run(main)
