# Agents stage, MPO part: train per seed, then its learning curve beside DDPG's, its diagnostics and a rollout GIF.
# DDPG's runs (results/agents/ddpg/seed{seed}/returns.csv) come from the basics agents' rules; with no
# `ddpg: seeds:` in the config the learning curve shows MPO alone. MPO keeps steps of its own where
# the basics agents' would change its outputs: its training (seed streams, device, records), its
# figures (beside DDPG's, with the KL bounds) and its rollout (its seed stream).


include: "basics_common.smk"


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


# The steps' own options, one function a rule (`params: args=<rule>_options`, as in bellman_common.smk).


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
