"""Stage 1 of the offline chain: train the behavioural DQN online (epsilon-greedy).

Writes the network (q.pt), its evaluation series (evaluations.csv) and its training diagnostics
(diagnostics.csv: the measured updates' statistics averaged between evaluations, docs/diagnostics.md).
A checkpoint in the output folder after every evaluation lets a killed run resume; it is removed when
the run completes. Watching the run with --tensorboard or not does not change what it resumes from.
"""

from __future__ import annotations

from pathlib import Path

from rlstudy.core.cli import add_tensorboard_argument, device_record, integer_from, parser, run
from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.atomic_writes import ensure_writable, save_csv, save_tensors
from rlstudy.core.provenance import provenance
from rlstudy.offline.double_dqn import DQN
from rlstudy.offline.run_arguments import add_run_arguments, run_of
from rlstudy.offline.runs import info_record, run_fingerprint
from rlstudy.offline.training import train_online


def main() -> None:
    p = parser(__doc__)
    add_run_arguments(p)
    p.add_argument("--steps", type=integer_from(1), required=True, help="environment steps")
    p.add_argument("--out-dir", required=True)
    add_tensorboard_argument(p)
    args = p.parse_args()
    spec, device = run_of(args)
    env, info = spec.make_env()
    spec.seed_torch("behavioural")
    learner = DQN(info, spec.params, device)
    out = Path(args.out_dir)
    ensure_writable(out)
    checkpoint = out / "checkpoint.pt"
    log = DiagnosticsLog(args.tensorboard)
    evaluations = train_online(learner, env, info, args.steps, spec.stream("behavioural-env"),
                               spec.rng("behavioural"), spec.evaluate, checkpoint,
                               run_fingerprint(args), f"behavioural DQN {args.env} seed {args.run_seed}", log)
    log.close()
    print(evaluations.to_string(index=False))
    record = provenance({"env": info_record(info), "run_seed": args.run_seed, "steps": args.steps,
                         "params": args.params, "atari": args.atari, "device": device_record(args.device, device)},
                        args.seed, {})
    save_tensors(out / "q.pt", learner.network.state_dict(), record)
    save_csv(out / "evaluations.csv", evaluations, record)
    save_csv(out / "diagnostics.csv", log.frame(), record)
    checkpoint.unlink(missing_ok=True)


if __name__ == "__main__":
    run(main)
