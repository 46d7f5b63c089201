# Agents stage, MPO part: train per seed, then its learning curve beside DDPG's, its diagnostics and a rollout GIF.
# DDPG's runs (results/agents/ddpg/seed{seed}/returns.csv) come from the basics agents' rules; with no
# `ddpg: seeds:` in the config the learning curve shows MPO alone. MPO keeps steps of its own where
# the basics agents' would change its outputs: its training (seed streams, device, records), its
# figures (beside DDPG's, with the KL bounds) and its rollout (its seed stream).


include: "basics_common.smk"


use rule step as mpo_train with:
    input:
        code=sources("agents.cli.train_mpo"),
    output:
        **agent_run_outputs(MPO_RUN, AGENTS["mpo"].model_file),
    log:
        "logs/agents/mpo/seed{seed}.log",
    benchmark:
        "logs/agents/mpo/seed{seed}.benchmark.tsv"
    # with DDPG's, the longest jobs of `make figures` (minutes each): started first, they do not idle a core at the end
    priority: 5
    resources:
        mem_mb=2000,
        runtime=AGENTS["mpo"].runtime_minutes,
        gpu=gpus_of_training_job(),
    params:
        args=mpo_train_options,


use rule figure_template as mpo_figures with:
    input:
        mpo=expand(f"{MPO_RUN}/{{f}}", seed=MPO_SEEDS, f=RUN_FILES.values()),
        ddpg=expand("results/agents/ddpg/seed{seed}/{f}", seed=DDPG_SEEDS, f=["returns.csv", "evaluation.csv"]),
        code=sources("agents.cli.plot_mpo"),
    output:
        figure_output("figures/agents/mpo_vs_ddpg_learning_curve", "mpo.rst", "5. Agents", "mpo"),
        figure_output("figures/agents/mpo_diagnostics", "mpo.rst", "5. Agents", "mpo"),
    log:
        "logs/figures/agents/mpo.log",
    params:
        outputs=mpo_figures_outputs,
        args=mpo_figures_options,


use rule step as mpo_rollout with:
    input:
        model=expand(f"{MPO_RUN}/{AGENTS['mpo'].model_file}", seed=MPO_SEEDS[0]),
        code=agent_sources("agents.cli.rollout_mpo", "mpo"),
    output:
        rollout_gif("mpo"),
    log:
        "logs/figures/agents/mpo_rollout.log",
    params:
        args=mpo_rollout_options,
