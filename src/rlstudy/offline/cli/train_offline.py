"""Stage 3 of the offline chain: learn from the fixed buffer alone, with one of the offline learners
(rlstudy.offline.learners: BCQ, offline DQN).

Writes the network (q.pt), its evaluation series (evaluations.csv) and its training diagnostics
(diagnostics.csv: the measured updates' statistics averaged between evaluations, docs/diagnostics.md).
A checkpoint in the output folder after every evaluation lets a killed run resume; it is removed when
the run completes. Watching the run with --tensorboard or not does not change what it resumes from.
"""

from __future__ import annotations

from pathlib import Path

from rlstudy.core.cli import add_tensorboard_argument, device_record, integer_from, json_arg, parser, run
from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.atomic_writes import ensure_writable, save_csv, save_tensors
from rlstudy.core.provenance import provenance
from rlstudy.offline.buffer import ReplayBuffer, buffer_files
from rlstudy.offline.learners import LEARNERS
from rlstudy.offline.run_arguments import add_run_arguments, run_of
from rlstudy.offline.runs import info_record, run_fingerprint
from rlstudy.offline.training import train_offline


def main() -> None:
    p = parser(__doc__)
    add_run_arguments(p)
    p.add_argument("--algorithm", choices=sorted(LEARNERS), required=True)
    p.add_argument("--options", type=json_arg, default={},
                   help="JSON of the learner's own options (BCQ: {\"threshold\": config 'offline.bcq_threshold'})")
    p.add_argument("--iterations", type=integer_from(1), required=True, help="updates")
    p.add_argument("--buffer-dir", required=True, help="folder of the buffer's .npy arrays")
    p.add_argument("--out-dir", required=True)
    add_tensorboard_argument(p)
    args = p.parse_args()
    registered = LEARNERS[args.algorithm]
    registered.check_options(args.options)
    spec, device = run_of(args)
    _, info = spec.make_env()
    buffer = ReplayBuffer.load(args.buffer_dir, info)
    spec.seed_torch(args.algorithm)
    learner = registered.build(info, spec.params, args.options, device)
    out = Path(args.out_dir)
    ensure_writable(out)
    checkpoint = out / "checkpoint.pt"
    log = DiagnosticsLog(args.tensorboard)
    evaluations = train_offline(learner, buffer, args.iterations, spec.rng(args.algorithm), spec.evaluate,
                                checkpoint, run_fingerprint(args),
                                f"{args.algorithm} {args.env} seed {args.run_seed}", log)
    log.close()
    print(evaluations.to_string(index=False))
    params = {"env": info_record(info), "run_seed": args.run_seed, "algorithm": args.algorithm,
              "iterations": args.iterations, "params": args.params, "atari": args.atari,
              "device": device_record(args.device, device), **args.options}
    record = provenance(params, args.seed, {f"buffer {k}": v for k, v in buffer_files(args.buffer_dir).items()})
    save_tensors(out / "q.pt", learner.network.state_dict(), record)
    save_csv(out / "evaluations.csv", evaluations, record)
    save_csv(out / "diagnostics.csv", log.frame(), record)
    checkpoint.unlink(missing_ok=True)


if __name__ == "__main__":
    run(main)
