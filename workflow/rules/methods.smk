# Stage 3: every optimiser x residual x seed on the short trajectory, and the summary table.


rule run_method:
    input:
        lambda w: trajectory_files(w.dataset, w.task),
        reference=lambda w: reference_of(w.dataset, w.task),
        exact=lambda w: exact_of(w.dataset, w.task),
        code=sources("bellman.cli.run_method"),
    output:
        network="results/runs/{dataset}/{task}/{optimizer}/{method}/seed{seed}/q.pt",
        curve="results/runs/{dataset}/{task}/{optimizer}/{method}/seed{seed}/errors.csv",
        diagnostics="results/runs/{dataset}/{task}/{optimizer}/{method}/seed{seed}/diagnostics.csv",
        wall_time="results/runs/{dataset}/{task}/{optimizer}/{method}/seed{seed}/wall_time.csv",
    params:
        optimizer_params=lambda w: as_json(optimizer_params(w.task, w.optimizer)),
        dynamics=lambda w: as_json(dynamics_of(w.dataset)),
        seed=config["seed"],
        device=config["device"],
    log:
        "logs/runs/{dataset}/{task}/{optimizer}/{method}/seed{seed}.log",
    benchmark:
        "logs/runs/{dataset}/{task}/{optimizer}/{method}/seed{seed}.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda w: 10 if w.optimizer == "sgd" else 30,
        gpu=gpus_of_training_job(),
    # CBO runs are the longest jobs: start them first so they do not finish last.
    priority: lambda w: 0 if w.optimizer == "sgd" else 5
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.run_method --dataset {wildcards.dataset:q} --optimizer {wildcards.optimizer:q}"
        " --task {wildcards.task:q}"
        " --method {wildcards.method:q} --run-seed {wildcards.seed:q} --seed {params.seed:q}"
        " --trajectory data/trajectories/{wildcards.dataset:q}/{wildcards.task:q}/short --reference {input.reference:q}"
        " --exact {input.exact:q} --params {params.optimizer_params:q} --dynamics {params.dynamics:q} --device {params.device:q}"
        " --out-dir results/runs/{wildcards.dataset:q}/{wildcards.task:q}/{wildcards.optimizer:q}/{wildcards.method:q}/seed{wildcards.seed:q}"
        " > {log:q} 2>&1"


rule summary:
    input:
        curves=[f"{d}/errors.csv" for d in all_run_dirs()],
        code=sources("bellman.cli.summarise"),
    output:
        table=report("results/summary.csv", caption="../report/summary.rst", category="4. Tables"),
        stats=report("results/summary_stats.csv", caption="../report/summary_stats.rst", category="4. Tables"),
    params:
        converged_below=config["summary"]["converged_below"],
        resamples=config["summary"]["bootstrap_resamples"],
        seed=config["seed"],
    log:
        "logs/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.summarise --curves {input.curves:q}"
        " --converged-below {params.converged_below:q} --seed {params.seed:q} --resamples {params.resamples:q}"
        " --out {output.table:q} --stats-out {output.stats:q} > {log:q} 2>&1"
