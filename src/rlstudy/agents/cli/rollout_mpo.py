"""A GIF of one greedy rollout of a trained MPO policy, rendered offscreen (render_mode="rgb_array")."""

from __future__ import annotations

import os

from rlstudy.agents.mpo.config import MPOParams
from rlstudy.agents.registry import build_agent
from rlstudy.agents.rollout import greedy_rollout, save_gif
from rlstudy.core import seeding
from rlstudy.core.cli import build, integer_from, json_arg, parser, run
from rlstudy.core.provenance import provenance


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--env", required=True, help="gymnasium id (config 'mpo.env')")
    p.add_argument("--model", required=True, help="model.pt of an MPO run")
    p.add_argument("--params", type=json_arg, required=True, help="JSON of MPOParams (config 'mpo'): the networks' shapes")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--run-seed", type=integer_from(0), required=True, help="the seed of the run the model comes from")
    p.add_argument("--max-steps", type=integer_from(1), default=200)
    p.add_argument("--fps", type=integer_from(1), default=30)
    p.add_argument("--every", type=integer_from(1), default=2, help="keep every n-th frame")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame renders without a display
    agent, params = build_agent("mpo"), build(MPOParams, args.params, "config 'mpo'")
    env = agent.make_env(args.env, params, render_mode="rgb_array")
    act = agent.policy(agent.load(args.model, env, params))
    rollout_seed = seeding.stream_seed(args.seed, "mpo", "rollout", str(args.run_seed))
    frames, _, rewards = greedy_rollout(env, act, rollout_seed, args.max_steps)
    env.close()
    print(f"greedy rollout of {args.model}: {len(rewards)} steps, return {rewards.sum():.1f}")
    record = provenance({"env": args.env, "run_seed": args.run_seed, "max_steps": args.max_steps, "fps": args.fps,
                         "every": args.every, "return": float(rewards.sum())}, args.seed, {"model": args.model})
    save_gif(args.out, frames, fps=args.fps, every=args.every, record=record)


if __name__ == "__main__":
    run(main)
