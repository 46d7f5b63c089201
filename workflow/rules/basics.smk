# Stage "agents": the basics notebook's four agents (Q-table and linear Q on a discretised
# MountainCar, DQN on CartPole, DDPG on Pendulum), one training job per agent and seed, their
# figures and rollout GIFs, and a summary table of every agent of the registry (MPO too).


include: "basics_common.smk"


use rule step as train_agent with:
    input:
        code=lambda w: agent_sources("agents.cli.train_agent", w.agent),
    output:
        **agent_run_outputs(AGENT_RUN, "model.pt"),
    log:
        "logs/agents/{agent}/seed{seed}.log",
    benchmark:
        "logs/agents/{agent}/seed{seed}.benchmark.tsv"
    wildcard_constraints:
        agent=agents_named(model_file="model.pt"),
    # the deep agents are the longest jobs: start them first
    priority: lambda w: 5 if AGENTS[w.agent].runtime_minutes >= 60 else 0
    resources:
        mem_mb=2000,
        runtime=lambda w: AGENTS[w.agent].runtime_minutes,
    params:
        args=train_agent_options,


use rule train_agent as train_qtable with:
    output:
        **agent_run_outputs(AGENT_RUN, "q_table.npy"),
    wildcard_constraints:
        agent=agents_named(model_file="q_table.npy"),


use rule figure_template as agent_figures with:
    input:
        lambda w: agent_run_files(w.agent),
        code=lambda w: agent_sources("agents.cli.plot_basics", w.agent),
    output:
        agent_figure_outputs("{agent}_value_policy"),
    log:
        "logs/figures/agents/{agent}.log",
    wildcard_constraints:
        agent=agents_drawing("value_policy"),
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        outputs=options(out_dir="figures/agents"),
        args=agent_figures_options,


use rule agent_figures as dqn_figures with:
    output:
        agent_figure_outputs("{agent}_max_q"),
    wildcard_constraints:
        agent=agents_drawing("max_q"),


use rule step as agents_summary with:
    input:
        [f"{d}/{f}" for d in agents_summary_runs() for f in ("returns.csv", "evaluation.csv")],
        code=sources("agents.cli.summarise_agents"),
    output:
        report("results/agents/summary.csv", caption="../report/agents_summary.rst", category="5. Agents"),
    log:
        "logs/agents/summary.log",
    params:
        args=agents_summary_options,
