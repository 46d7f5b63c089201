"""Collect the offline runs into results/offline/summary.csv: one row per run and learner.

Each row: the final and best evaluation return, and the run's references, the buffer's episodes
and the behavioural policy; `at_least_buffer` is the BCQ paper's criterion (final >= buffer).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.core.cli import parser, run, run_seed_of
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.loaders import refuse_repeated_runs
from rlstudy.core.provenance import check_recorded_run, provenance
from rlstudy.offline.evaluation import load_evaluations, load_performance
from rlstudy.offline.learners import DIAGNOSED

LEARNERS = tuple(DIAGNOSED)  # the behavioural DQN, then every offline learner


def run_identity(env: str, seed: int, learner: str | None) -> dict:
    """What a file's provenance record must say for it to belong to run <env>/seed<seed> (and to
    the learner, for BCQ's and offline DQN's, whose step trains either)."""
    names = {"parameters.env.env_id": env, "parameters.run_seed": seed}
    return {**names, "parameters.algorithm": learner} if learner in ("bcq", "dqn") else names


def run_rows(folder: Path) -> list[dict]:
    """The rows of one run folder results/offline/{env}/seed{seed}; each file's provenance record must
    name this environment, seed and learner, so a copied folder is refused."""
    env, seed = folder.parent.name, run_seed_of(folder)
    check_recorded_run(folder / "buffer" / "performance.csv", "offline buffer", run_identity(env, seed, None))
    performance = load_performance(folder / "buffer" / "performance.csv")
    rows = []
    for learner in LEARNERS:
        path = folder / learner / "evaluations.csv"
        check_recorded_run(path, f"{learner} evaluations", run_identity(env, seed, learner))
        curve = load_evaluations(path, f"{learner} evaluations")
        rows.append({
            "env": env, "seed": seed, "learner": learner,
            "iterations": int(curve["iteration"].iloc[-1]),
            "final_return": curve["mean_return"].iloc[-1], "final_std": curve["std_return"].iloc[-1],
            "evaluation_episodes": int(curve["episodes"].iloc[-1]),
            "best_return": curve["mean_return"].max(),
            "buffer_return": performance.loc["buffer", "mean_return"],
            "behavioural_return": performance.loc["behavioural", "mean_return"],
        })
    return rows


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--runs", nargs="+", required=True, help="run folders results/offline/{env}/seed{seed}")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    refuse_repeated_runs([(folder, {"run": Path(folder).resolve()}) for folder in args.runs])
    table = pd.DataFrame([row for folder in args.runs for row in run_rows(Path(folder))])
    table["at_least_buffer"] = table["final_return"] >= table["buffer_return"]
    print(table.to_string(index=False))
    inputs = {f"{folder} {learner}": Path(folder) / learner / "evaluations.csv"
              for folder in args.runs for learner in LEARNERS}
    save_csv(args.out, table, provenance({}, None, inputs))


if __name__ == "__main__":
    run(main)
