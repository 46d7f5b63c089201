# Stage 3: every optimiser setting x residual estimator x seed on the short trajectory, and the summary
# table. The settings and estimators come from the registries (common.smk: SETTINGS, ESTIMATORS).

RUN = "results/runs/{dataset}/{task}/{setting}/{estimator}/seed{seed}"


rule run_method:
    input:
        lambda w: trajectory_files(w.dataset, w.task),
        reference=lambda w: reference_of(w.dataset, w.task),
        exact=lambda w: exact_of(w.dataset, w.task),
        code=sources("bellman.cli.run_method"),
    output:
        network=f"{RUN}/q.pt",
        curve=f"{RUN}/errors.csv",
        diagnostics=f"{RUN}/diagnostics.csv",
        wall_time=f"{RUN}/wall_time.csv",
    log:
        "logs/runs/{dataset}/{task}/{setting}/{estimator}/seed{seed}.log",
    benchmark:
        "logs/runs/{dataset}/{task}/{setting}/{estimator}/seed{seed}.benchmark.tsv"
    priority: lambda w: optimizer_of(w.setting).priority
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda w: optimizer_of(w.setting).runtime_minutes,
        gpu=gpus_of_training_job(),
    params:
        # The run: its optimiser, setting, dataset, task, estimator and replicate seed.
        run=lambda w: [
            "--optimizer",
            SETTINGS[w.setting].optimizer,
            "--setting",
            w.setting,
            "--dataset",
            w.dataset,
            "--task",
            w.task,
            "--estimator",
            w.estimator,
            "--run-seed",
            w.seed,
            "--trajectory",
            f"data/trajectories/{w.dataset}/{w.task}/short",
        ],
        params=lambda w: as_json(setting_params(w.task, w.setting)),
        problem=lambda w: problem_of(w.dataset),
        seed=config["seed"],
        device=config["device"],
        numerics=config["numerics"],
        out_dir=lambda w, output: str(Path(output.curve).parent),
    shell:
        "python -m rlstudy.core.warmstart rlstudy.bellman.cli.run_method {params.run:q} --params {params.params:q} --problem {params.problem:q}"
        " --seed {params.seed:q} --device {params.device:q} --numerics {params.numerics:q} --reference {input.reference:q} --exact {input.exact:q}"
        " --out-dir {params.out_dir:q} > {log:q} 2>&1"


rule summary:
    input:
        curves=[f"{d}/errors.csv" for d in all_run_dirs()],
        networks=[f"{d}/q.pt" for d in all_run_dirs()],
        exact=[entry["exact"] for entry in exact_entries()],
        densities=sorted({entry["density"] for entry in exact_entries()}),
        code=sources("bellman.cli.summarise"),
    output:
        table=report("results/summary.csv", caption="../report/summary.rst", category="4. Tables"),
        stats=report("results/summary_stats.csv", caption="../report/summary_stats.rst", category="4. Tables"),
    log:
        "logs/summary.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        converged_below=config["summary"]["converged_below"],
        exact=as_json({"rows": exact_entries()}),
        gamma=config["problem"]["gamma"],
    shell:
        "python -m rlstudy.core.warmstart rlstudy.bellman.cli.summarise --curves {input.curves:q} --exact {params.exact:q} --gamma {params.gamma:q}"
        " --converged-below {params.converged_below:q}"
        " --out {output.table:q} --stats-out {output.stats:q} > {log:q} 2>&1"


rule fourier_error:
    input:
        curves=[f"{d}/errors.csv" for d in all_run_dirs()],
        networks=[f"{d}/q.pt" for d in all_run_dirs()],
        exact=[entry["exact"] for entry in exact_entries()],
        code=sources("bellman.cli.fourier_error"),
    output:
        report("results/fourier_error.csv", caption="../report/fourier_error.rst", category="4. Tables"),
    log:
        "logs/fourier_error.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        # the density is not the step's input: left out, so that its provenance names only what it read
        exact=as_json({"rows": [{k: v for k, v in entry.items() if k != "density"} for entry in exact_entries()]}),
        gamma=config["problem"]["gamma"],
    shell:
        "python -m rlstudy.core.warmstart rlstudy.bellman.cli.fourier_error --curves {input.curves:q} --exact {params.exact:q}"
        " --gamma {params.gamma:q} --out {output:q} > {log:q} 2>&1"
