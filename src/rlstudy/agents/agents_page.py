"""The generated block of docs/agents.md (its results table, `agents-results`), rendered from
results/agents/summary.csv by `make readme` (report/study_tables.py registers it), so that no result
there is typed by hand: every value it inserts is escaped (core.markdown.text)."""

from __future__ import annotations

import pandas as pd

from rlstudy.core.markdown import generated_note, text


def render_agents(summary: pd.DataFrame, commit: str, start: str, end: str) -> str:
    """One row per agent and seed, in the summary's order (the registry's): its task, the episodes
    and environment steps of training, the mean greedy evaluation return and the bar it must pass."""
    lines = [start, generated_note("results/agents/summary.csv", commit,
                          "each run's mean greedy evaluation return after training against the config's bar "
                          "(`<agent>.solved_return`); a run below it is **failing**."), "",
             "| agent | environment | seed | training episodes | environment steps | greedy evaluation "
             "(mean) | solved bar | solved |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in summary.itertuples():
        solved = "yes" if row.solved else "**no**"
        lines.append(f"| {text(row.agent)} | {text(row.env)} | {text(row.seed)} | {text(row.episodes)} | {text(row.steps)} "
                     f"| {row.final_mean_return:.1f} | {row.solved_return:g} | {solved} |")
    return "\n".join([*lines, end])


def agents_scale(path: str, parameters: dict, config: dict) -> tuple[dict, dict]:
    """(what config.yaml asks of an agent's run, what its record says was used): the agent is the
    run's folder (results/agents/<agent>/seed<n>/...); MPO's parameters are its section's."""
    agent = path.split("/")[-3]
    section = config[agent]
    wanted = section["params"] if "params" in section else {k: v for k, v in section.items()
                                                             if k in parameters["params"]}
    return wanted, parameters["params"]
