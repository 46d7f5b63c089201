# Stage 3: every optimiser setting x residual estimator x seed on the short trajectory, and the summary
# table. The settings and estimators come from the registries (bellman_common.smk: SETTINGS, ESTIMATORS).

RUN = "results/runs/{dataset}/{task}/{setting}/{estimator}/seed{seed}"


use rule step as run_method with:
    input:
        lambda w: trajectory_files(w.dataset, w.task),
        reference=lambda w: reference_of(w.dataset, w.task),
        exact=lambda w: exact_of(w.dataset, w.task),
        code=lambda w: optimizer_sources("bellman.cli.run_method", optimizer_of(w.setting).name),
    output:
        **files_in(RUN, METHOD_RUN_FILES),
    log:
        "logs/runs/{dataset}/{task}/{setting}/{estimator}/seed{seed}.log",
    benchmark:
        "logs/runs/{dataset}/{task}/{setting}/{estimator}/seed{seed}.benchmark.tsv"
    priority: lambda w: optimizer_of(w.setting).priority
    resources:
        mem_mb=2000,
        runtime=lambda w: optimizer_of(w.setting).runtime_minutes,
        gpu=gpus_of_training_job(),
    params:
        args=run_method_options,


use rule step as summary with:
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
    params:
        args=summary_options,


use rule step as fourier_error with:
    input:
        curves=[f"{d}/errors.csv" for d in all_run_dirs()],
        networks=[f"{d}/q.pt" for d in all_run_dirs()],
        exact=[entry["exact"] for entry in exact_entries()],
        code=sources("bellman.cli.fourier_error"),
    output:
        report("results/fourier_error.csv", caption="../report/fourier_error.rst", category="4. Tables"),
    log:
        "logs/fourier_error.log",
    params:
        args=fourier_error_options,
