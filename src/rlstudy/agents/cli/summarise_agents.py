"""One row per agent run (the basics agents and MPO): results/agents/summary.csv (agent, env, seed,
episodes, steps, final_mean_return = mean greedy evaluation return, solved_return = the config's bar,
solved = final_mean_return >= solved_return). Training times are measurements, not results: they are
in each job's logs/agents/**.benchmark.tsv (docs/agents.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.core.cli import json_arg, parser, run
from rlstudy.core.errors import InputError
from rlstudy.agents.episodes import load_evaluation, load_returns
from rlstudy.core.io import provenance, save_csv


def summary_row(folder: Path, agents: dict) -> dict:
    """The row of run folder <...>/<agent>/seed<N>; `agents` maps an agent to its env and solved_return."""
    agent, seed = folder.parent.name, int(folder.name.removeprefix("seed"))
    if agent not in agents:
        raise InputError(f"{folder}: agent {agent!r} is not in --agents {sorted(agents)}")
    returns = load_returns(folder / "returns.csv", f"{agent} training returns")
    evaluation = load_evaluation(folder / "evaluation.csv", f"{agent} evaluation")
    final = float(evaluation["return"].mean())
    bar = float(agents[agent]["solved_return"])
    return {"agent": agent, "env": agents[agent]["env"], "seed": seed, "episodes": len(returns),
            "steps": int(returns["step"].iloc[-1]), "final_mean_return": final, "solved_return": bar,
            "solved": final >= bar}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--runs", nargs="+", required=True, help="run folders results/agents/<agent>/seed<N>")
    p.add_argument("--agents", type=json_arg, required=True,
                   help='JSON: agent -> {"env": gymnasium id, "solved_return": number}')
    p.add_argument("--out", required=True)
    args = p.parse_args()
    table = pd.DataFrame([summary_row(Path(r), args.agents) for r in args.runs])
    print(table.to_string(index=False))
    failing = table[~table["solved"]]
    for row in failing.itertuples():
        print(f"FAILING: {row.agent} seed {row.seed} on {row.env}: mean greedy return {row.final_mean_return:.1f} "
              f"< {row.solved_return:g}")
    inputs = {f"{r}/{name}": f"{r}/{name}" for r in args.runs for name in ("returns.csv", "evaluation.csv")}
    save_csv(args.out, table, provenance({"agents": args.agents}, None, inputs))


if __name__ == "__main__":
    run(main)
