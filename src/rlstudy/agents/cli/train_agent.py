"""Train one of the basics notebook's agents (Q-table, linear Q, DQN, DDPG) with one seed.

Writes, in --out-dir: returns.csv (episode, step, return: one row per training episode),
evaluation.csv (episode, return: greedy episodes after training, on an environment seeded from
the run seed), diagnostics.csv (the means of the updates' statistics per window of `log_every`
steps or episodes, docs/diagnostics.md) and the model (q_table.npy or model.pt), each with its
provenance record.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from rlstudy.agents.episodes import evaluate, evaluation_frame
from rlstudy.agents.registry import BASICS, agent_params, build_agent
from rlstudy.core import seeding
from rlstudy.core.cli import (
    add_tensorboard_argument,
    integer_from,
    json_arg,
    parser,
    run,
    setup_torch,
)
from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.atomic_writes import ensure_writable, save_csv
from rlstudy.core.provenance import provenance


def main() -> None:
    p = parser(__doc__ + "\nThe workflow's rule train_agent (workflow/rules/basics.smk) runs it once per agent and\n"
               "seed, every option marked 'config' taken from the config.\n")
    p.add_argument("--agent", choices=sorted(BASICS), required=True, help="the agent: a section of the config")
    p.config_option("--env", "{agent}.env", help="gymnasium environment id")
    p.config_option("--params", "{agent}.params", type=json_arg, help="JSON of the agent's parameters")
    p.config_option("--evaluation-episodes", "{agent}.evaluation_episodes", type=integer_from(1),
                    help="greedy episodes after training")
    p.add_argument("--run-seed", type=integer_from(0), required=True,
                   help="the replicate's seed: N of the run folder results/agents/<agent>/seed<N> "
                        "(the workflow runs those of config '<agent>.seeds')")
    p.config_option("--seed", "seed", type=integer_from(0), help="the master seed")
    p.add_argument("--out-dir", required=True, help="the run folder (results/agents/<agent>/seed<N>)")
    add_tensorboard_argument(p)
    args = p.parse_args()
    setup_torch("cpu")  # networks this small train fastest on the CPU
    agent = build_agent(args.agent)
    params = agent_params(agent, args.params)
    names = (agent.name, str(args.run_seed))
    env = agent.make_env(args.env, params)
    ensure_writable(args.out_dir)
    log = DiagnosticsLog(args.tensorboard)

    start = time.perf_counter()
    model, returns = agent.train(env, params, seeding.stream_seed(args.seed, *names, "env"),
                                 seeding.numpy_rng(args.seed, *names, "acting"),
                                 seeding.torch_generator(args.seed, *names, "init"), log)
    seconds = time.perf_counter() - start
    log.close()
    evaluation = evaluate(env, agent.policy(model), seeding.stream_seed(args.seed, *names, "evaluation"),
                          args.evaluation_episodes)
    curve = returns.frame()
    print(f"{agent.name} on {args.env}, seed {args.run_seed}: {len(curve)} episodes, {curve['step'].iloc[-1]} steps "
          f"in {seconds:.1f} s; last 10 training returns {curve['return'].tail(10).mean():.1f}; "
          f"greedy evaluation {np.mean(evaluation):.1f} over {len(evaluation)} episodes")

    record = provenance({"agent": agent.name, "env": args.env, "run_seed": args.run_seed,
                         "params": dataclasses.asdict(params), "evaluation_episodes": args.evaluation_episodes},
                        args.seed, {})
    out = Path(args.out_dir)
    save_csv(out / "returns.csv", curve, record)
    save_csv(out / "evaluation.csv", evaluation_frame(evaluation), record)
    save_csv(out / "diagnostics.csv", log.frame(), record)
    agent.save(out / agent.model_file, model, record)


if __name__ == "__main__":
    run(main)
