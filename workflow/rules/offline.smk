# Offline RL: behavioural DQN -> its noisy buffer -> every offline learner of the registry
# (rlstudy.offline.learners: BCQ, offline DQN), per environment and seed.
# Environment ids are path wildcards, so Atari games go by their *NoFrameskip-v4 ids (no '/').


include: "offline_common.smk"


wildcard_constraints:
    env=r"[A-Za-z0-9_.-]+",
    algorithm="|".join(re.escape(name) for name in LEARNERS),


# The template of a run's three training steps (behavioural DQN, buffer, offline learners): started
# first, memory and time by the environment's kind, a GPU where config `device` is cuda.
use rule step as offline_step with:
    log:
        "logs/templates/offline_step.log",
    priority: 10
    resources:
        mem_mb=lambda w: offline_mem_mb(w.env),
        runtime=lambda w: offline_runtime(w.env),
        gpu=gpus_of_training_job(),


use rule offline_step as offline_behavioural with:
    input:
        code=sources("offline.cli.train_behavioural"),
    output:
        **files_in(f"{OFFLINE_RUN}/behavioural", LEARNER_FILES),
    log:
        "logs/offline/{env}/seed{seed}/behavioural.log",
    benchmark:
        "logs/offline/{env}/seed{seed}/behavioural.benchmark.tsv"
    params:
        args=offline_behavioural_options,


use rule offline_step as offline_buffer with:
    input:
        policy=rules.offline_behavioural.output.q,
        code=sources("offline.cli.generate_buffer"),
    output:
        BUFFER_FILES,
        episodes=f"{OFFLINE_RUN}/buffer/episodes.csv",
        performance=f"{OFFLINE_RUN}/buffer/performance.csv",
    log:
        "logs/offline/{env}/seed{seed}/buffer.log",
    benchmark:
        "logs/offline/{env}/seed{seed}/buffer.benchmark.tsv"
    params:
        args=offline_buffer_options,


use rule offline_step as offline_train with:
    input:
        BUFFER_FILES,
        code=lambda w: learner_sources(w.algorithm),
    output:
        **files_in(f"{OFFLINE_RUN}/{{algorithm}}", LEARNER_FILES),
    log:
        "logs/offline/{env}/seed{seed}/{algorithm}.log",
    benchmark:
        "logs/offline/{env}/seed{seed}/{algorithm}.benchmark.tsv"
    params:
        args=offline_train_options,


use rule figure_template as offline_figure with:
    input:
        lambda w: offline_run_files(w.env),
        lambda w: offline_diagnostics_files(w.env),
        code=sources("offline.cli.plot_offline"),
    output:
        figure_output("figures/offline_{env}", "offline.rst", "6. Offline RL", "{env}"),
        offline_diagnostics_figures(),
    log:
        "logs/figures/offline_{env}.log",
    params:
        args=lambda w: options(env=w.env, runs=offline_run_dirs(w.env), diagnostics_prefix=f"figures/offline/{w.env}"),


use rule step as offline_summary with:
    input:
        [offline_run_files(env) for env in OFFLINE["environments"]],
        code=sources("offline.cli.summarise_offline"),
    output:
        report("results/offline/summary.csv", caption="../report/offline_summary.rst", category="4. Tables"),
    log:
        "logs/offline/summary.log",
    params:
        args=offline_summary_options,


rule offline_all:
    input:
        offline_targets(),
