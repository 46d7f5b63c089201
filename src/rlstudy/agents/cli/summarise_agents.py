"""One row per agent run (the basics agents and MPO): results/agents/summary.csv (agent, env, seed,
episodes, steps, final_mean_return = mean greedy evaluation return, solved_return = the config's bar,
solved = final_mean_return >= solved_return, final_return_sd and evaluation_episodes = the
sd (ddof 1) and number of the greedy evaluation episodes). Training times are measurements, not results: they are
in each job's logs/agents/**.benchmark.tsv (docs/agents.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from rlstudy.core.cli import is_finite_number, json_arg, parser, run, run_seed_of
from rlstudy.core.errors import InputError
from rlstudy.agents.episodes import load_evaluation, load_returns
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.loaders import refuse_repeated_runs
from rlstudy.core.provenance import check_recorded_run, provenance


def check_agents(agents: dict) -> dict:
    """--agents by hand: each agent an object with its env (a string) and a finite solved_return."""
    for agent, entry in agents.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("env"), str)
                and is_finite_number(entry.get("solved_return"))):
            raise InputError(f"--agents: agent {agent!r} must be {{\"env\": <gymnasium id>, \"solved_return\": "
                             f"<number>}}, got {json.dumps(entry)[:200]}")
    return agents


def run_identity(agent: str, env: str, seed: int) -> dict:
    """What a run's provenance record must say for it to be <agent>/seed<seed> on env (MPO's record
    has no agent key: train_mpo trains MPO alone)."""
    names = {"parameters.env": env, "parameters.run_seed": seed}
    return names if agent == "mpo" else {"parameters.agent": agent, **names}


def summary_row(folder: Path, agents: dict) -> dict:
    """The row of run folder <...>/<agent>/seed<N>; `agents` maps an agent to its env and solved_return.
    Each file's provenance record must name this agent, env and seed: a copied folder is refused."""
    agent, seed = folder.parent.name, run_seed_of(folder)
    if agent not in agents:
        raise InputError(f"{folder}: agent {agent!r} is not in --agents {sorted(agents)}")
    for name in ("returns.csv", "evaluation.csv"):
        check_recorded_run(folder / name, f"{agent} run", run_identity(agent, agents[agent]["env"], seed))
    returns = load_returns(folder / "returns.csv", f"{agent} training returns")
    evaluation = load_evaluation(folder / "evaluation.csv", f"{agent} evaluation")
    final = float(evaluation["return"].mean())
    bar = float(agents[agent]["solved_return"])
    # the evaluation's own noise, for the claims' per-run tests (claims.yaml run_noise)
    spread = float(evaluation["return"].std(ddof=1)) if len(evaluation) > 1 else float("nan")
    return {"agent": agent, "env": agents[agent]["env"], "seed": seed, "episodes": len(returns),
            "steps": int(returns["step"].iloc[-1]), "final_mean_return": final, "solved_return": bar,
            "solved": final >= bar, "final_return_sd": spread, "evaluation_episodes": len(evaluation)}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--runs", nargs="+", required=True, help="run folders results/agents/<agent>/seed<N>")
    p.add_argument("--agents", type=json_arg, required=True,
                   help='JSON: agent -> {"env": gymnasium id, "solved_return": number}')
    p.add_argument("--out", required=True)
    args = p.parse_args()
    agents = check_agents(args.agents)
    refuse_repeated_runs([(r, {"run": Path(r).resolve()}) for r in args.runs])
    table = pd.DataFrame([summary_row(Path(r), agents) for r in args.runs])
    print(table.to_string(index=False))
    failing = table[~table["solved"]]
    for row in failing.itertuples():
        print(f"FAILING: {row.agent} seed {row.seed} on {row.env}: mean greedy return {row.final_mean_return:.1f} "
              f"< {row.solved_return:g}")
    inputs = {f"{r}/{name}": f"{r}/{name}" for r in args.runs for name in ("returns.csv", "evaluation.csv")}
    save_csv(args.out, table, provenance({"agents": args.agents}, None, inputs))


if __name__ == "__main__":
    run(main)
