# Stage 3b: what CBO needs. A sweep over CBO's parameters (grids of two, config `cbo_sweep`) on our
# trajectory, its tidy table and heatmaps; and CBO against SGD at equal cost, from the main runs.

SWEEP_RUN = "results/sweep/{grid}/{point}/seed{seed}"


# A run_method job with a sweep point's parameters. Every point shares the setting name (cbo-sweep),
# hence the initial swarm (for equal N) and the sample stream: the points differ by their parameters
# only. Divergence is a result here, not an error.
use rule run_method as sweep_run with:
    input:
        trajectory_files("ours", SWEEP["task"]),
        reference=reference_of("ours", SWEEP["task"]),
        exact=exact_of("ours", SWEEP["task"]),
        code=optimizer_sources("bellman.cli.run_method", "cbo"),
    output:
        **files_in(SWEEP_RUN, METHOD_RUN_FILES),
    log:
        "logs/sweep/{grid}/{point}/seed{seed}.log",
    benchmark:
        "logs/sweep/{grid}/{point}/seed{seed}.benchmark.tsv"
    priority: 0
    resources:
        mem_mb=2000,
        runtime=OPTIMIZERS["cbo"].runtime_minutes,
        gpu=gpus_of_training_job(),
    params:
        args=sweep_run_options,


use rule step as sweep_table with:
    input:
        curves=sweep_curves(),
        code=sources("bellman.cli.summarise_sweep"),
    output:
        report("results/sweep/cbo_sweep.csv", caption="../report/sweep_table.rst", category="4. Tables"),
    log:
        "logs/sweep/table.log",
    params:
        args=sweep_table_options,


use rule figure_template as sweep_figure with:
    input:
        table="results/sweep/cbo_sweep.csv",
        code=sources("bellman.cli.plot_sweep"),
    output:
        figure_output("figures/ours/cbo_sweep", "cbo_sweep.rst", "3. What CBO needs", "parameter sweep"),
    log:
        "logs/figures/ours/cbo_sweep.log",
    params:
        args=lambda w, input: options(table=input.table, converged_below=config["summary"]["converged_below"]),


use rule figure_template as cost_figure with:
    input:
        lambda w: [f"{d}/{f}" for d in dataset_run_dirs(w.dataset) for f in ("errors.csv", "wall_time.csv")],
        code=sources("bellman.cli.plot_cost"),
    output:
        figure_output("figures/{dataset}/cost_{cost}", "cost.rst", "3. What CBO needs", "equal cost, {dataset} data"),
    log:
        "logs/figures/{dataset}/cost_{cost}.log",
    params:
        args=cost_figure_options,


# The equal-cost table: per main run, its evaluations and the evaluations to the convergence bound.
use rule step as cost_table with:
    input:
        curves=[f"{d}/errors.csv" for d in all_run_dirs()],
        code=sources("bellman.cli.summarise_cost"),
    output:
        report("results/cost.csv", caption="../report/cost_table.rst", category="4. Tables"),
    log:
        "logs/cost_table.log",
    params:
        args=cost_table_options,
