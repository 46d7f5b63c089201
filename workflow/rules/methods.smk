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
        "python -m rlstudy.bellman.cli.run_method --dataset {wildcards.dataset} --optimizer {wildcards.optimizer}"
        " --task {wildcards.task}"
        " --method {wildcards.method} --run-seed {wildcards.seed} --seed {params.seed}"
        " --trajectory data/trajectories/{wildcards.dataset}/{wildcards.task}/short --reference {input.reference}"
        " --exact {input.exact} --params '{params.optimizer_params}' --dynamics '{params.dynamics}' --device {params.device}"
        " --out-dir results/runs/{wildcards.dataset}/{wildcards.task}/{wildcards.optimizer}/{wildcards.method}/seed{wildcards.seed}"
        " > {log} 2>&1"


rule summary:
    input:
        curves=[f"{d}/errors.csv" for d in all_run_dirs()],
        code=sources("bellman.cli.summarise"),
    output:
        table=report("results/summary.csv", caption="../report/summary.rst", category="4. Tables"),
        stats=report("results/summary_stats.csv", caption="../report/summary_stats.rst", category="4. Tables"),
    params:
        converged_below=config["summary"]["converged_below"],
    log:
        "logs/summary.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.summarise --curves {input.curves}"
        " --converged-below {params.converged_below}"
        " --out {output.table} --stats-out {output.stats} > {log} 2>&1"
