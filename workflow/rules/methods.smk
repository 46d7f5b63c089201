# Stage 3: every optimiser x residual x seed on the short trajectory, and the summary table.


rule run_method:
    input:
        trajectory_files("{task}", "short"),
        reference="results/reference/{task}/q_star.pt",
        script=cli("run_method"),
    output:
        network="results/runs/{task}/{optimizer}/{method}/seed{seed}/q.pt",
        curve="results/runs/{task}/{optimizer}/{method}/seed{seed}/errors.csv",
    params:
        optimizer_params=lambda w: as_json(optimizer_params(w.task, w.optimizer)),
        dynamics=as_json(config["dynamics"]),
        seed=config["seed"],
        device=config["device"],
    log:
        "logs/runs/{task}/{optimizer}/{method}/seed{seed}.log",
    benchmark:
        "logs/runs/{task}/{optimizer}/{method}/seed{seed}.benchmark.tsv"
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
        "python -m rlstudy.cli.run_method --optimizer {wildcards.optimizer} --task {wildcards.task}"
        " --method {wildcards.method} --run-seed {wildcards.seed} --seed {params.seed}"
        " --trajectory data/trajectories/{wildcards.task}/short --reference {input.reference}"
        " --params '{params.optimizer_params}' --dynamics '{params.dynamics}' --device {params.device}"
        " --out-dir results/runs/{wildcards.task}/{wildcards.optimizer}/{wildcards.method}/seed{wildcards.seed}"
        " > {log} 2>&1"


rule summary:
    input:
        curves=[f"{d}/errors.csv" for d in all_run_dirs()],
        script=cli("summarise"),
    output:
        "results/summary.csv",
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
        "python -m rlstudy.cli.summarise --curves {input.curves}"
        " --converged-below {params.converged_below} --out {output} > {log} 2>&1"
