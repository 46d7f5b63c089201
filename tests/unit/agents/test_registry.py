"""The agents' registry is the one list of the agents: the workflow's catalogue agrees with it, and
every basics agent's figure kind exists."""

from rlstudy.agents.catalogue import CATALOGUE
from rlstudy.agents.figures import VALUE_MAPS
from rlstudy.agents.registry import AGENTS, BASICS, BasicsAgent


def test_the_workflow_catalogue_lists_the_registry_agents_in_order_with_their_files():
    assert list(CATALOGUE) == list(AGENTS)
    for name, agent in AGENTS.items():
        files = CATALOGUE[name]
        assert (files.train_step, files.model_file) == (agent.train_step, agent.model_file), name
        expected_figure = agent.value_figure_name if isinstance(agent, BasicsAgent) else None
        assert files.value_figure == expected_figure, name
        assert isinstance(files.runtime_minutes, int) and files.runtime_minutes > 0, name  # the rules' runtime


def test_basics_agents_are_trained_by_train_agent_and_draw_a_known_map():
    assert list(BASICS) == [name for name, files in CATALOGUE.items() if files.train_step == "train_agent"]
    for agent in BASICS.values():
        assert agent.train_step == "train_agent" and agent.value_map in VALUE_MAPS
    assert AGENTS["mpo"].train_step == "train_mpo" and "mpo" not in BASICS
