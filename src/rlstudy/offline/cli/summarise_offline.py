"""Collect the offline runs into results/offline/summary.csv: one row per run and learner.

Each row: the final and best evaluation return, and the run's references, the buffer's episodes
and the behavioural policy; `at_least_buffer` is the BCQ paper's criterion (final >= buffer).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.core.cli import parser, run
from rlstudy.core.io import provenance, save_csv
from rlstudy.offline.evaluation import load_evaluations, load_performance
from rlstudy.offline.learners import DIAGNOSED

LEARNERS = tuple(DIAGNOSED)  # the behavioural DQN, then every offline learner


def run_rows(folder: Path) -> list[dict]:
    """The rows of one run folder results/offline/{env}/seed{seed}."""
    performance = load_performance(folder / "buffer" / "performance.csv")
    rows = []
    for learner in LEARNERS:
        curve = load_evaluations(folder / learner / "evaluations.csv", f"{learner} evaluations")
        rows.append({
            "env": folder.parent.name, "seed": int(folder.name.removeprefix("seed")), "learner": learner,
            "iterations": int(curve["iteration"].iloc[-1]),
            "final_return": curve["mean_return"].iloc[-1], "final_std": curve["std_return"].iloc[-1],
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
    table = pd.DataFrame([row for folder in args.runs for row in run_rows(Path(folder))])
    table["at_least_buffer"] = table["final_return"] >= table["buffer_return"]
    print(table.to_string(index=False))
    inputs = {f"{folder} {learner}": Path(folder) / learner / "evaluations.csv"
              for folder in args.runs for learner in LEARNERS}
    save_csv(args.out, table, provenance({}, None, inputs))


if __name__ == "__main__":
    run(main)
