"""What the workflow's rules must know of each agent of the registry (agents/registry.py), readable
at parse time without importing torch: the step that trains it, its model file, for the basics
agents the file name of its value/policy figure, and the runtime its training job asks for. In the registry's order (the summary's rows);
tests/unit/agents/test_registry.py checks it against the registry, so the two cannot drift."""

from __future__ import annotations

from typing import NamedTuple


class AgentFiles(NamedTuple):
    train_step: str           # agents/cli/<train_step>.py
    model_file: str           # results/agents/<agent>/seed<N>/<model_file>
    value_figure: str | None  # figures/agents/<value_figure>.<fmt>, drawn by plot_basics (None: not a basics agent)
    runtime_minutes: int      # its training job's runtime resource, at notebook scale on a shared CPU (SLURM's -t);
    #                           an hour or more starts the job first (basics.smk's priority)


CATALOGUE: dict[str, AgentFiles] = {
    "qtable": AgentFiles("train_agent", "q_table.npy", "qtable_value_policy", 15),
    "linear_q": AgentFiles("train_agent", "model.pt", "linear_q_value_policy", 30),
    "dqn": AgentFiles("train_agent", "model.pt", "dqn_max_q", 60),
    "ddpg": AgentFiles("train_agent", "model.pt", "ddpg_value_policy", 60),
    "mpo": AgentFiles("train_mpo", "model.pt", None, 30),
}
