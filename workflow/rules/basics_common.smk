# Helpers of the agents' rules (basics.smk, mpo.smk): the registry's agents (rlstudy.agents.registry,
# read without torch), their run folders, files, figures and code.

import os

from rlstudy.agents.registry import AGENTS, BASICS

BASICS_AGENTS = list(BASICS)
AGENT_RUN = "results/agents/{agent}/seed{seed}"
# The files of every agent's run by name, besides its model.
RUN_FILES = {"returns": "returns.csv", "evaluation": "evaluation.csv", "diagnostics": "diagnostics.csv"}


def agent_sources(step, agent):
    """The code of an agent's job: the step's and its agent's class's module (the registry names the
    class; the step imports it when it builds the agent)."""
    return list(dict.fromkeys([*sources(step), *sources(f"agents.{AGENTS[agent].module}")]))


def agents_named(model_file):
    """A wildcard constraint: the basics agents whose model file is `model_file`."""
    return "|".join(agent for agent in BASICS_AGENTS if AGENTS[agent].model_file == model_file)


def agents_drawing(suffix):
    """A wildcard constraint: the basics agents whose value/policy figure is <agent>_<suffix>."""
    return "|".join(agent for agent in BASICS_AGENTS if AGENTS[agent].value_figure == f"{agent}_{suffix}")


def agent_run_dirs(agent):
    return [f"results/agents/{agent}/seed{seed}" for seed in config[agent]["seeds"]]


def agent_run_files(agent):
    return [f"{d}/{f}" for d in agent_run_dirs(agent) for f in (*RUN_FILES.values(), AGENTS[agent].model_file)]


def agent_run_outputs(folder, model_file):
    """A training job's files by name: RUN_FILES and its model."""
    return files_in(folder, {**RUN_FILES, "model": model_file})


def agents_summary_runs():
    """The run folders of every agent of the registry, in its order, for results/agents/summary.csv."""
    return [d for agent in AGENTS for d in agent_run_dirs(agent)]


def basics_figure_names(agent):
    return [f"{agent}_learning_curve", f"{agent}_diagnostics", AGENTS[agent].value_figure]


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
    """plot_basics's figures of an agent ({agent} wildcard), its value/policy figure named `value_figure`,
    then its rollout GIF."""
    return [
        *figure_output("figures/agents/{agent}_learning_curve", "agent_figures.rst", "5. Agents", "{agent}"),
        *figure_output("figures/agents/{agent}_diagnostics", "diagnostics.rst", "5. Agents", "{agent}"),
        *figure_output(f"figures/agents/{value_figure}", "agent_figures.rst", "5. Agents", "{agent}"),
        rollout_gif("{agent}"),
    ]


def rollout_gif(agent):
    """An agent's rollout GIF, in the report beside its figures."""
    path = f"figures/agents/{agent}_rollout.gif"
    return report(path, caption="../report/rollout.rst", category="5. Agents", subcategory=agent)


# The steps' own options, one function for each rule of basics.smk and mpo.smk, <rule>_options, its params
# `args` (as in bellman_common.smk).


def train_agent_options(wildcards, output):
    w = wildcards
    return options(
        agent=w.agent,
        env=config[w.agent]["env"],
        params=as_json(config[w.agent]["params"]),
        evaluation_episodes=config[w.agent]["evaluation_episodes"],
        run_seed=w.seed,
        seed=config["seed"],
        out_dir=os.path.dirname(output.returns),
        tensorboard=tensorboard_dir(f"agents/{w.agent}/seed{w.seed}"),
    )


def agent_figures_options(wildcards):
    agent = wildcards.agent
    return options(
        agent=agent,
        env=config[agent]["env"],
        params=as_json(config[agent]["params"]),
        runs=agent_run_dirs(agent),
        seed=config["seed"],
        rollout_steps=config[agent]["rollout_steps"],
        solved_return=config[agent]["solved_return"],
    )


def agents_summary_options(wildcards):
    return options(
        runs=agents_summary_runs(),
        agents=as_json({agent: {key: config[agent][key] for key in ("env", "solved_return")} for agent in AGENTS}),
        out="results/agents/summary.csv",
    )


# MPO's runs, parameters, targets and options (mpo.smk).
MPO_SEEDS = config["mpo"]["seeds"]
DDPG_SEEDS = config.get("ddpg", {}).get("seeds", [])
MPO_RUN = "results/agents/mpo/seed{seed}"
# MPOParams as JSON: every key of the config's `mpo` section but the task, its seeds and its bar.
MPO_PARAMS = as_json({k: v for k, v in config["mpo"].items() if k not in ("env", "seeds", "solved_return")})
MPO_TARGETS = [
    *figure_files("agents/mpo_vs_ddpg_learning_curve"),
    *figure_files("agents/mpo_diagnostics"),
    "figures/agents/mpo_rollout.gif",
]


def mpo_train_options(wildcards, output):
    return options(
        env=config["mpo"]["env"],
        run_seed=wildcards.seed,
        seed=config["seed"],
        params=MPO_PARAMS,
        device=config["device"],
        out_dir=os.path.dirname(output.returns),
        tensorboard=tensorboard_dir(f"agents/mpo/seed{wildcards.seed}"),
    )


def mpo_figures_outputs(wildcards):
    return options(
        curve_prefix="figures/agents/mpo_vs_ddpg_learning_curve", diagnostics_prefix="figures/agents/mpo_diagnostics"
    )


def mpo_figures_options(wildcards):
    return options(
        env=config["mpo"]["env"],
        mpo_runs=expand(MPO_RUN, seed=MPO_SEEDS),
        ddpg_runs=expand("results/agents/ddpg/seed{seed}", seed=DDPG_SEEDS),
        kl_bound=config["mpo"]["mstep_kl_epsilon"],
        solved_return=config["mpo"]["solved_return"],
    )


def mpo_rollout_options(wildcards, input, output):
    return options(
        env=config["mpo"]["env"],
        model=input.model,
        params=MPO_PARAMS,
        seed=config["seed"],
        run_seed=MPO_SEEDS[0],
        out=output,
    )
