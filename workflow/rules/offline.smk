# Offline RL: behavioural DQN -> its noisy buffer -> BCQ and offline DQN, per environment and seed.
# Environment ids are path wildcards, so Atari games go by their *NoFrameskip-v4 ids (no '/').


include: "offline_common.smk"


wildcard_constraints:
    env=r"[A-Za-z0-9_.-]+",
    algorithm="bcq|dqn",


rule offline_behavioural:
    input:
        code=sources("offline.cli.train_behavioural"),
    output:
        q=f"{OFFLINE_RUN}/behavioural/q.pt",
        evaluations=f"{OFFLINE_RUN}/behavioural/evaluations.csv",
        diagnostics=f"{OFFLINE_RUN}/behavioural/diagnostics.csv",
    params:
        run=offline_run_args,
        tensorboard=lambda w: tensorboard_arg(f"offline/{w.env}/seed{w.seed}/behavioural"),
        learner=lambda w: offline_params(w.env),
        atari=as_json(OFFLINE["atari_preprocessing"]),
        steps=lambda w: offline_budget(w.env, "behavioural"),
        out_dir=lambda w, output: os.path.dirname(output.q),
    log:
        "logs/offline/{env}/seed{seed}/behavioural.log",
    benchmark:
        "logs/offline/{env}/seed{seed}/behavioural.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=lambda w: offline_mem_mb(w.env),
        runtime=lambda w: offline_runtime(w.env),
        gpu=gpus_of_training_job(),
    priority: 10
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.offline.cli.train_behavioural {params.run:q} --params {params.learner:q} --atari {params.atari:q}"
        " --steps {params.steps:q} --out-dir {params.out_dir:q} {params.tensorboard:q} > {log:q} 2>&1"


rule offline_buffer:
    input:
        policy=rules.offline_behavioural.output.q,
        code=sources("offline.cli.generate_buffer"),
    output:
        BUFFER_FILES,
        episodes=f"{OFFLINE_RUN}/buffer/episodes.csv",
        performance=f"{OFFLINE_RUN}/buffer/performance.csv",
    params:
        run=offline_run_args,
        learner=lambda w: offline_params(w.env),
        atari=as_json(OFFLINE["atari_preprocessing"]),
        steps=lambda w: offline_budget(w.env, "buffer"),
        low_noise_p=OFFLINE["low_noise_p"],
        rand_action_p=OFFLINE["rand_action_p"],
        buffer_dir=lambda w, output: os.path.dirname(output[0]),
        out_dir=lambda w, output: os.path.dirname(output.performance),
    log:
        "logs/offline/{env}/seed{seed}/buffer.log",
    benchmark:
        "logs/offline/{env}/seed{seed}/buffer.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=lambda w: offline_mem_mb(w.env),
        runtime=lambda w: offline_runtime(w.env),
        gpu=gpus_of_training_job(),
    priority: 10
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.offline.cli.generate_buffer {params.run:q} --params {params.learner:q} --atari {params.atari:q}"
        " --policy {input.policy:q} --steps {params.steps:q} --low-noise-p {params.low_noise_p:q}"
        " --rand-action-p {params.rand_action_p:q} --buffer-dir {params.buffer_dir:q} --out-dir {params.out_dir:q}"
        " > {log:q} 2>&1"


rule offline_train:
    input:
        BUFFER_FILES,
        code=sources("offline.cli.train_offline"),
    output:
        q=f"{OFFLINE_RUN}/{{algorithm}}/q.pt",
        evaluations=f"{OFFLINE_RUN}/{{algorithm}}/evaluations.csv",
        diagnostics=f"{OFFLINE_RUN}/{{algorithm}}/diagnostics.csv",
    params:
        run=offline_run_args,
        tensorboard=lambda w: tensorboard_arg(f"offline/{w.env}/seed{w.seed}/{w.algorithm}"),
        learner=lambda w: offline_params(w.env),
        atari=as_json(OFFLINE["atari_preprocessing"]),
        iterations=lambda w: offline_budget(w.env, "offline"),
        buffer_dir=lambda w, input: os.path.dirname(input[0]),
        out_dir=lambda w, output: os.path.dirname(output.q),
        threshold=lambda w: ["--threshold", OFFLINE["bcq_threshold"]] if w.algorithm == "bcq" else [],
    log:
        "logs/offline/{env}/seed{seed}/{algorithm}.log",
    benchmark:
        "logs/offline/{env}/seed{seed}/{algorithm}.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=lambda w: offline_mem_mb(w.env),
        runtime=lambda w: offline_runtime(w.env),
        gpu=gpus_of_training_job(),
    priority: 10
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.offline.cli.train_offline {params.run:q} --params {params.learner:q} --atari {params.atari:q}"
        " --algorithm {wildcards.algorithm:q} {params.threshold:q} --iterations {params.iterations:q}"
        " --buffer-dir {params.buffer_dir:q} --out-dir {params.out_dir:q} {params.tensorboard:q} > {log:q} 2>&1"


rule offline_figure:
    input:
        lambda w: offline_run_files(w.env),
        lambda w: offline_diagnostics_files(w.env),
        code=sources("offline.cli.plot_offline"),
    output:
        figure_output("figures/offline_{env}", "offline.rst", "6. Offline RL", "{env}"),
        offline_diagnostics_figures(),
    params:
        runs=lambda w: [f"results/offline/{w.env}/seed{seed}" for seed in OFFLINE["seeds"]],
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/offline_{env}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.offline.cli.plot_offline --env {wildcards.env:q} --runs {params.runs:q}"
        " --formats {params.formats:q} --dpi {params.dpi:q} --out-prefix figures/offline_{wildcards.env:q}"
        " --diagnostics-prefix figures/offline/{wildcards.env:q} > {log:q} 2>&1"


rule offline_summary:
    input:
        [offline_run_files(env) for env in OFFLINE["environments"]],
        code=sources("offline.cli.summarise_offline"),
    output:
        report("results/offline/summary.csv", caption="../report/offline_summary.rst", category="4. Tables"),
    params:
        runs=[f"results/offline/{env}/seed{seed}" for env in OFFLINE["environments"] for seed in OFFLINE["seeds"]],
    log:
        "logs/offline/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.offline.cli.summarise_offline --runs {params.runs:q} --out {output:q} > {log:q} 2>&1"


rule offline_all:
    input:
        offline_targets(),
