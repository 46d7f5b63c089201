# Agents stage, MPO part: train per seed, then its learning curve beside DDPG's, its diagnostics and a rollout GIF.
# DDPG's runs (results/agents/ddpg/seed{seed}/returns.csv) come from the basics agents' rules; with no
# `ddpg: seeds:` in the config the learning curve shows MPO alone.

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


rule mpo_train:
    input:
        code=sources("agents.cli.train_mpo"),
    output:
        returns=f"{MPO_RUN}/returns.csv",
        evaluation=f"{MPO_RUN}/evaluation.csv",
        diagnostics=f"{MPO_RUN}/diagnostics.csv",
        model=f"{MPO_RUN}/model.pt",
    params:
        env=config["mpo"]["env"],
        mpo=MPO_PARAMS,
        seed=config["seed"],
        device=config["device"],
        tensorboard=lambda w: tensorboard_arg(f"agents/mpo/seed{w.seed}"),
    log:
        "logs/agents/mpo/seed{seed}.log",
    benchmark:
        "logs/agents/mpo/seed{seed}.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
        gpu=gpus_of_training_job(),
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.agents.cli.train_mpo --env {params.env:q} --run-seed {wildcards.seed:q} --seed {params.seed:q}"
        " --params {params.mpo:q} --device {params.device:q} --out-dir results/agents/mpo/seed{wildcards.seed:q}"
        " {params.tensorboard:q} > {log:q} 2>&1"


rule mpo_figures:
    input:
        mpo=expand(f"{MPO_RUN}/{{f}}", seed=MPO_SEEDS, f=["returns.csv", "evaluation.csv", "diagnostics.csv"]),
        ddpg=expand("results/agents/ddpg/seed{seed}/{f}", seed=DDPG_SEEDS, f=["returns.csv", "evaluation.csv"]),
        code=sources("agents.cli.plot_mpo"),
    output:
        figure_output("figures/agents/mpo_vs_ddpg_learning_curve", "mpo.rst", "5. Agents", "mpo"),
        figure_output("figures/agents/mpo_diagnostics", "mpo.rst", "5. Agents", "mpo"),
    params:
        env=config["mpo"]["env"],
        mpo_runs=expand(MPO_RUN, seed=MPO_SEEDS),
        ddpg_runs=expand("results/agents/ddpg/seed{seed}", seed=DDPG_SEEDS),
        kl_bound=config["mpo"]["mstep_kl_epsilon"],
        solved_return=config["mpo"]["solved_return"],
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/agents/mpo.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.agents.cli.plot_mpo --env {params.env:q} --mpo-runs {params.mpo_runs:q}"
        " --ddpg-runs {params.ddpg_runs:q} --kl-bound {params.kl_bound:q} --solved-return {params.solved_return:q}"
        " --formats {params.formats:q}"
        " --dpi {params.dpi:q} --curve-prefix figures/agents/mpo_vs_ddpg_learning_curve"
        " --diagnostics-prefix figures/agents/mpo_diagnostics > {log:q} 2>&1"


rule mpo_rollout:
    input:
        model=expand(f"{MPO_RUN}/model.pt", seed=MPO_SEEDS[0]),
        code=sources("agents.cli.rollout_mpo"),
    output:
        report("figures/agents/mpo_rollout.gif", caption="../report/rollout.rst", category="5. Agents",
               subcategory="mpo"),
    params:
        env=config["mpo"]["env"],
        sizes=config["mpo"]["policy_layer_sizes"],
        seed=config["seed"],
        run_seed=MPO_SEEDS[0],
    log:
        "logs/figures/agents/mpo_rollout.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "SDL_VIDEODRIVER=dummy python -m rlstudy.agents.cli.rollout_mpo --env {params.env:q} --model {input.model:q}"
        " --policy-layer-sizes {params.sizes:q} --seed {params.seed:q} --run-seed {params.run_seed:q}"
        " --out {output:q} > {log:q} 2>&1"
