# Stage "agents": the basics notebook's four agents (Q-table and linear Q on a discretised
# MountainCar, DQN on CartPole, DDPG on Pendulum), one training job per agent and seed, their
# figures and rollout GIFs, and a summary table.

include: "basics_common.smk"


rule train_agent:
    input:
        code=sources("agents.cli.train_agent"),
    output:
        returns="results/agents/{agent}/seed{seed}/returns.csv",
        evaluation="results/agents/{agent}/seed{seed}/evaluation.csv",
        diagnostics="results/agents/{agent}/seed{seed}/diagnostics.csv",
        model="results/agents/{agent}/seed{seed}/model.pt",
    wildcard_constraints:
        agent="linear_q|dqn|ddpg",
    params:
        env=lambda w: config[w.agent]["env"],
        evaluation_episodes=lambda w: config[w.agent]["evaluation_episodes"],
        agent_params=lambda w: as_json(config[w.agent]["params"]),
        seed=config["seed"],
        tensorboard=lambda w: tensorboard_arg(f"agents/{w.agent}/seed{w.seed}"),
    log:
        "logs/agents/{agent}/seed{seed}.log",
    benchmark:
        "logs/agents/{agent}/seed{seed}.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda w: BASICS_RUNTIME[w.agent],
    # the deep agents are the longest jobs: start them first
    priority: lambda w: 5 if w.agent in ("dqn", "ddpg") else 0
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.agents.cli.train_agent --agent {wildcards.agent:q} --env {params.env:q}"
        " --params {params.agent_params:q} --evaluation-episodes {params.evaluation_episodes:q}"
        " --run-seed {wildcards.seed:q} --seed {params.seed:q} --out-dir results/agents/{wildcards.agent:q}/seed{wildcards.seed:q}"
        " {params.tensorboard:q} > {log:q} 2>&1"


use rule train_agent as train_qtable with:
    output:
        returns="results/agents/{agent}/seed{seed}/returns.csv",
        evaluation="results/agents/{agent}/seed{seed}/evaluation.csv",
        diagnostics="results/agents/{agent}/seed{seed}/diagnostics.csv",
        model="results/agents/{agent}/seed{seed}/q_table.npy",
    wildcard_constraints:
        agent="qtable",


rule agent_figures:
    input:
        lambda w: basics_run_files(w.agent),
        code=sources("agents.cli.plot_basics"),
    output:
        figure_output("figures/agents/{agent}_learning_curve", "agent_figures.rst", "5. Agents", "{agent}"),
        figure_output("figures/agents/{agent}_diagnostics", "diagnostics.rst", "5. Agents", "{agent}"),
        figure_output("figures/agents/{agent}_value_policy", "agent_figures.rst", "5. Agents", "{agent}"),
        gif=report("figures/agents/{agent}_rollout.gif", caption="../report/rollout.rst", category="5. Agents",
                   subcategory="{agent}"),
    wildcard_constraints:
        agent="qtable|linear_q|ddpg",
    params:
        runs=lambda w: basics_run_dirs(w.agent),
        env=lambda w: config[w.agent]["env"],
        agent_params=lambda w: as_json(config[w.agent]["params"]),
        rollout_steps=lambda w: config[w.agent]["rollout_steps"],
        solved_return=lambda w: config[w.agent]["solved_return"],
        seed=config["seed"],
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/agents/{agent}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.agents.cli.plot_basics --agent {wildcards.agent:q} --env {params.env:q}"
        " --params {params.agent_params:q} --runs {params.runs:q} --seed {params.seed:q}"
        " --rollout-steps {params.rollout_steps:q} --solved-return {params.solved_return:q}"
        " --formats {params.formats:q} --dpi {params.dpi:q}"
        " --out-dir figures/agents > {log:q} 2>&1"


use rule agent_figures as dqn_figures with:
    output:
        figure_output("figures/agents/{agent}_learning_curve", "agent_figures.rst", "5. Agents", "{agent}"),
        figure_output("figures/agents/{agent}_diagnostics", "diagnostics.rst", "5. Agents", "{agent}"),
        figure_output("figures/agents/{agent}_max_q", "agent_figures.rst", "5. Agents", "{agent}"),
        gif=report("figures/agents/{agent}_rollout.gif", caption="../report/rollout.rst", category="5. Agents",
                   subcategory="{agent}"),
    wildcard_constraints:
        agent="dqn",


rule agents_summary:
    input:
        [f"{d}/{f}" for d in agents_summary_runs() for f in ("returns.csv", "evaluation.csv")],
        code=sources("agents.cli.summarise_agents"),
    output:
        report("results/agents/summary.csv", caption="../report/agents_summary.rst", category="5. Agents"),
    params:
        runs=agents_summary_runs(),
        agents=as_json({agent: {key: config[agent][key] for key in ("env", "solved_return")}
                        for agent in [*BASICS_AGENTS, "mpo"]}),
    log:
        "logs/agents/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.agents.cli.summarise_agents --runs {params.runs:q} --agents {params.agents:q}"
        " --out {output:q} > {log:q} 2>&1"
