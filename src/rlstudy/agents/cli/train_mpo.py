"""Train MPO on a continuous-action gymnasium task for one seed, then evaluate it greedily.

Writes returns.csv (episode, step, return), evaluation.csv (episode, return), diagnostics.csv
(duals, KLs, Q range, losses, skipped batches per logged step) and model.pt, each with provenance.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from rlstudy.agents.episodes import evaluate, evaluation_frame
from rlstudy.agents.mpo.config import MPOParams
from rlstudy.agents.mpo.environment import make_env
from rlstudy.agents.mpo.loop import train
from rlstudy.core import seeding
from rlstudy.core.cli import (add_device_argument, add_tensorboard_argument, build, device_record, integer_from,
                              json_arg, parser, run, setup_torch)
from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.atomic_writes import ensure_writable, save_csv, save_tensors
from rlstudy.core.provenance import provenance


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--env", required=True, help="gymnasium id (config 'mpo.env')")
    p.add_argument("--run-seed", type=integer_from(0), required=True, help="the replicate's seed")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--params", type=json_arg, required=True, help="JSON of MPOParams")
    p.add_argument("--out-dir", required=True)
    add_device_argument(p)
    add_tensorboard_argument(p)
    args = p.parse_args()
    device = setup_torch(args.device)
    params = build(MPOParams, args.params, "config 'mpo'")
    env = make_env(args.env)
    ensure_writable(args.out_dir)
    seed = str(args.run_seed)
    torch.manual_seed(seeding.stream_seed(args.seed, "mpo", "init", seed))  # network initialisation
    label = f"MPO {args.env} seed {args.run_seed}"
    log = DiagnosticsLog(args.tensorboard)
    result = train(env, params, device, env_seed=seeding.stream_seed(args.seed, "mpo", "env", seed),
                   rng=seeding.numpy_rng(args.seed, "mpo", "replay", seed),
                   generator=seeding.torch_generator(args.seed, "mpo", "sampling", seed), label=label, log=log)
    log.close()
    evaluation = evaluation_frame(evaluate(env, lambda observation: result.agent.act(observation, greedy=True)[0],
                                           seeding.stream_seed(args.seed, "mpo", "evaluation", seed),
                                           params.eval_episodes))
    env.close()
    last = result.returns["return"].tail(10).mean()
    print(f"{label}: last 10 training episodes {last:.1f}; greedy evaluation {evaluation['return'].mean():.1f} "
          f"+- {evaluation['return'].std():.1f} over {len(evaluation)} episodes; "
          f"{result.agent.skipped_nonfinite_batches} non-finite batches skipped")
    record = provenance({"env": args.env, "run_seed": args.run_seed, "params": dataclasses.asdict(params),
                         "device": device_record(args.device, result.agent.device)}, args.seed, {})
    out = Path(args.out_dir)
    save_csv(out / "returns.csv", result.returns, record)
    save_csv(out / "evaluation.csv", evaluation, record)
    save_csv(out / "diagnostics.csv", result.diagnostics, record)
    save_tensors(out / "model.pt", result.agent.state_dict(), record)


if __name__ == "__main__":
    run(main)
