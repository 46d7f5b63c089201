# Helpers of the agents' rules (basics.smk, mpo.smk): the registry's agents (rlstudy.agents.catalogue,
# checked against rlstudy.agents.registry by a test), their run folders, files and figures.

import os

from rlstudy.agents.catalogue import CATALOGUE

BASICS_AGENTS = [agent for agent, files in CATALOGUE.items() if files.train_step == "train_agent"]
RUN_FILES = ("returns.csv", "evaluation.csv", "diagnostics.csv")


def agents_named(model_file):
    """A wildcard constraint: the basics agents whose model file is `model_file`."""
    return "|".join(agent for agent in BASICS_AGENTS if CATALOGUE[agent].model_file == model_file)


def agents_drawing(suffix):
    """A wildcard constraint: the basics agents whose value/policy figure is <agent>_<suffix>."""
    return "|".join(agent for agent in BASICS_AGENTS if CATALOGUE[agent].value_figure == f"{agent}_{suffix}")


def agent_run_dirs(agent):
    return [f"results/agents/{agent}/seed{seed}" for seed in config[agent]["seeds"]]


def agent_run_files(agent):
    return [f"{d}/{f}" for d in agent_run_dirs(agent) for f in (*RUN_FILES, CATALOGUE[agent].model_file)]


def agents_summary_runs():
    """The run folders of every agent of the registry, in its order, for results/agents/summary.csv."""
    return [d for agent in CATALOGUE for d in agent_run_dirs(agent)]


def basics_figure_names(agent):
    return [f"{agent}_learning_curve", f"{agent}_diagnostics", CATALOGUE[agent].value_figure]


def basics_targets():
    """Every figure and GIF of the basics agents (rule all builds them)."""
    return [
        path
        for agent in BASICS_AGENTS
        for path in [
            *(expand("figures/agents/{name}.{fmt}", name=basics_figure_names(agent), fmt=config["figures"]["formats"])),
            f"figures/agents/{agent}_rollout.gif",
        ]
    ]


def agent_figure_outputs(value_figure):
    """plot_basics's figures of an agent ({agent} wildcard), its value/policy figure named `value_figure`."""
    return [
        *figure_output("figures/agents/{agent}_learning_curve", "agent_figures.rst", "5. Agents", "{agent}"),
        *figure_output("figures/agents/{agent}_diagnostics", "diagnostics.rst", "5. Agents", "{agent}"),
        *figure_output(f"figures/agents/{value_figure}", "agent_figures.rst", "5. Agents", "{agent}"),
    ]
