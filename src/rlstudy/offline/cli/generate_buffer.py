"""Stage 2 of the offline chain: the behavioural policy fills the fixed buffer, with noise.

Writes the buffer (.npy arrays), the return of every complete episode in it (episodes.csv), and
the performance table (performance.csv): the buffer's episodes, and the behavioural policy
evaluated as every learner is (the run's evaluation episodes, eval epsilon).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.core.cli import device_record, integer_from, parser, probability, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import ensure_writable, save_csv
from rlstudy.core.loaders import load_tensors
from rlstudy.core.provenance import provenance
from rlstudy.offline.double_dqn import DQN
from rlstudy.offline.evaluation import PERFORMANCE_SOURCES
from rlstudy.offline.run_arguments import add_run_arguments, run_of
from rlstudy.offline.runs import info_record
from rlstudy.offline.training import generate_buffer


def main() -> None:
    p = parser(__doc__)
    add_run_arguments(p)
    p.add_argument("--policy", required=True, help="the behavioural DQN (q.pt)")
    p.add_argument("--steps", type=integer_from(1), required=True, help="transitions in the buffer")
    p.add_argument("--low-noise-p", type=probability, required=True, help="probability of a low-noise episode")
    p.add_argument("--rand-action-p", type=probability, required=True, help="random-action probability otherwise")
    p.add_argument("--buffer-dir", required=True, help="folder of the buffer's .npy arrays")
    p.add_argument("--out-dir", required=True, help="folder of episodes.csv and performance.csv")
    args = p.parse_args()
    spec, device = run_of(args)
    env, info = spec.make_env()
    learner = DQN(info, spec.params, device)
    try:
        learner.network.load_state_dict(load_tensors(args.policy, "behavioural DQN"))
    except RuntimeError as err:
        raise InputError(f"{args.policy}: not a DQN of {args.env} ({err})") from err
    for folder in (args.buffer_dir, args.out_dir):
        ensure_writable(folder)
    buffer, episodes = generate_buffer(learner, env, info, args.steps, spec.stream("buffer-env"),
                                       spec.rng("buffer"), args.low_noise_p, args.rand_action_p,
                                       spec.params.eval_eps, f"buffer {args.env} seed {args.run_seed}")
    if episodes.empty:
        raise InputError(f"no episode of {args.env} completed in {args.steps} buffer steps; "
                         "raise config 'offline.steps.buffer'")
    behavioural = spec.evaluate(learner)
    performance = pd.DataFrame({
        "source": list(PERFORMANCE_SOURCES),
        "mean_return": [episodes["return"].mean(), behavioural.mean()],
        "std_return": [episodes["return"].std(ddof=0), behavioural.std()],
        "episodes": [len(episodes), len(behavioural)],
    })
    print(performance.to_string(index=False))
    record = provenance({"env": info_record(info), "run_seed": args.run_seed, "steps": args.steps,
                         "low_noise_p": args.low_noise_p, "rand_action_p": args.rand_action_p,
                         "params": args.params, "atari": args.atari, "device": device_record(args.device, device)},
                        args.seed, {"policy": args.policy})
    buffer.save(args.buffer_dir, record)
    save_csv(Path(args.out_dir) / "episodes.csv", episodes, record)
    save_csv(Path(args.out_dir) / "performance.csv", performance, record)


if __name__ == "__main__":
    run(main)
