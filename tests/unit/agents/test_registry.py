"""The agents' registry is the one list of the agents, readable without torch (the workflow reads it
at parse time): each entry builds its class, which takes its name and files from the entry, and every
basics agent's figure kind exists."""

import subprocess
import sys

from rlstudy.agents.figures import VALUE_MAPS
from rlstudy.agents.kinds import Agent, BasicsAgent
from rlstudy.agents.registry import AGENTS, BASICS, build_agent


def test_every_entry_builds_its_agent_with_the_entry_s_name_and_files():
    for name, entry in AGENTS.items():
        agent = build_agent(name)
        assert isinstance(agent, Agent) and agent.entry is entry, name
        assert (agent.name, agent.model_file, agent.train_step) == (name, entry.model_file, entry.train_step)
        assert isinstance(entry.runtime_minutes, int) and entry.runtime_minutes > 0, name  # the rules' runtime
        # a basics agent (train_agent, plot_basics) draws its value/policy figure; no other agent has one
        assert isinstance(agent, BasicsAgent) == (entry.train_step == "train_agent") == (entry.value_figure is not None)


def test_basics_agents_are_trained_by_train_agent_and_draw_a_known_map():
    assert BASICS == tuple(name for name, entry in AGENTS.items() if entry.train_step == "train_agent")
    for name in BASICS:
        agent = build_agent(name)
        assert agent.value_map in VALUE_MAPS and agent.value_figure_name == AGENTS[name].value_figure
    assert AGENTS["mpo"].train_step == "train_mpo" and "mpo" not in BASICS


def test_the_registry_is_read_without_importing_torch():
    probe = "import sys, rlstudy.agents.registry; print('torch' in sys.modules, 'gymnasium' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]
