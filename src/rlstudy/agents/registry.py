"""The agents, registered once: one line each in AGENTS. Readable without torch (the workflow reads
it at parse time): an entry names its class, rlstudy.agents.<module>.<cls>, and builds it on demand,
as the offline learners' registry does (offline/learners.py). Each entry holds what the rules and
steps must know of the agent: its training step, its model file, its value/policy figure (a basics
agent's, drawn by plot_basics) and its training job's runtime.

Adding an agent: its class (kinds.py, or a module of its own), one line here, its config section,
schema and smoke scale: docs/agents.md, "Adding an agent", lists the files."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from rlstudy.core.cli import FILL_FROM_CONFIG, build


@dataclass(frozen=True)
class AgentEntry:
    """name: its config section and folder (results/agents/<name>/seed<N>); module, cls: its class,
    rlstudy.agents.<module>.<cls> (named, not imported; the rules list the module's sources as its
    jobs' inputs); train_step: agents/cli/<train_step>.py trains it (train_agent: a basics agent);
    model_file: results/agents/<name>/seed<N>/<model_file>; value_figure: figures/agents/<value_figure>.<fmt>,
    drawn by plot_basics (None: not a basics agent); runtime_minutes: its training job's runtime at
    notebook scale on a shared CPU (SLURM's -t; an hour or more starts the job first)."""

    name: str
    module: str
    cls: str
    train_step: str
    model_file: str
    value_figure: str | None
    runtime_minutes: int

    def build(self):
        """The agent, a kinds.Agent: its class imported now (with torch and gymnasium). Not imported for
        typing either: the rules list the modules a step imports as its code, and the class's module
        is the entry's own (basics_common.smk: agent_sources)."""
        return getattr(importlib.import_module(f"rlstudy.agents.{self.module}"), self.cls)(self)


AGENTS: dict[str, AgentEntry] = {entry.name: entry for entry in (
    AgentEntry("qtable", "kinds", "QTable", "train_agent", "q_table.npy", "qtable_value_policy", 15),
    AgentEntry("linear_q", "kinds", "LinearQ", "train_agent", "model.pt", "linear_q_value_policy", 30),
    AgentEntry("dqn", "kinds", "DQN", "train_agent", "model.pt", "dqn_max_q", 60),
    AgentEntry("ddpg", "kinds", "DDPG", "train_agent", "model.pt", "ddpg_value_policy", 60),
    AgentEntry("mpo", "kinds", "MPO", "train_mpo", "model.pt", None, 30),
)}
# The basics agents (trained by train_agent, drawn by plot_basics), in the registry's order.
BASICS: tuple[str, ...] = tuple(name for name, entry in AGENTS.items() if entry.train_step == "train_agent")


def build_agent(name: str):
    """The agent registered as `name`, built (its class imported now)."""
    return AGENTS[name].build()


def agent_params(agent, values: dict):
    """The agent's parameter dataclass from the config's `params` (lists become tuples)."""
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    return build(agent.params, values, f"config '{agent.name}.params'", fill=FILL_FROM_CONFIG)
