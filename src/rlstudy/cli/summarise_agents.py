"""One row per agent run (the basics agents and MPO): results/agents/summary.csv (agent, env, seed,
episodes, steps, final_mean_return = mean greedy evaluation return). Training times are measurements,
not results: they are in each job's logs/agents/**.benchmark.tsv (README, the agents' sections)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import InputError
from ..io import load_csv, provenance, save_csv
from .common import json_arg, parser, run


def summary_row(folder: Path, envs: dict) -> dict:
    """The row of run folder <...>/<agent>/seed<N>."""
    agent, seed = folder.parent.name, int(folder.name.removeprefix("seed"))
    if agent not in envs:
        raise InputError(f"{folder}: agent {agent!r} has no environment in --envs {sorted(envs)}")
    returns = load_csv(folder / "returns.csv", f"{agent} training returns")
    evaluation = load_csv(folder / "evaluation.csv", f"{agent} evaluation")
    return {"agent": agent, "env": envs[agent], "seed": seed, "episodes": len(returns),
            "steps": int(returns["step"].iloc[-1]), "final_mean_return": evaluation["return"].mean()}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--runs", nargs="+", required=True, help="run folders results/agents/<agent>/seed<N>")
    p.add_argument("--envs", type=json_arg, required=True, help="JSON: agent -> environment id")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    table = pd.DataFrame([summary_row(Path(r), args.envs) for r in args.runs])
    print(table.to_string(index=False))
    inputs = {f"{r}/{name}": f"{r}/{name}" for r in args.runs for name in ("returns.csv", "evaluation.csv")}
    save_csv(args.out, table, provenance({"envs": args.envs}, None, inputs))


if __name__ == "__main__":
    run(main)
