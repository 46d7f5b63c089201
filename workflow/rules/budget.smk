# The error budget of each task (bellman/budget/, docs/bellman.md "The error budget"): how far the
# network gets from the exact Q, part by part, each part measured by its own fit: the network's reach
# (regression to the exact Q), the minimiser of each estimator's population residual, the minimiser of
# its sampled residual on our short trajectory; beside them the runs' final errors (results/summary.csv).


# The network's reach (`reach`: every point alike, from the seeded initialisation) and the reach where
# the data are (`reach_weighted`: its points weighted as the residual fits weigh them, started from the
# uniform reach; planned only when config budget.weights is not uniform: budget_parts).
use rule step as budget_reach with:
    input:
        exact=lambda w: exact_of("ours", w.task),
        weights=lambda w: budget_weights(w.task),
        start=lambda w: [f"results/budget/{w.task}/reach/q.pt"] if w.reach == "reach_weighted" else [],
        code=sources("bellman.cli.budget_reach"),
    output:
        **files_in(f"{BUDGET_DIR}/{{reach}}", FIT_FILES),
    log:
        "logs/budget/{task}/{reach}.log",
    benchmark:
        "logs/budget/{task}/{reach}.benchmark.tsv"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        args=budget_reach_options,


use rule step as budget_population with:
    input:
        exact=lambda w: exact_of("ours", w.task),
        start=f"{BUDGET_DIR}/reach/q.pt",
        weights=lambda w: budget_weights(w.task),
        code=sources("bellman.cli.budget_population"),
    output:
        **files_in(f"{BUDGET_DIR}/population/{{estimator}}", FIT_FILES),
    log:
        "logs/budget/{task}/population_{estimator}.log",
    benchmark:
        "logs/budget/{task}/population_{estimator}.benchmark.tsv"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        args=budget_population_options,


use rule step as budget_finite with:
    input:
        trajectory_files("ours", "{task}"),
        exact=lambda w: exact_of("ours", w.task),
        start=f"{BUDGET_DIR}/reach/q.pt",
        weights=lambda w: budget_weights(w.task),
        code=sources("bellman.cli.budget_finite"),
    output:
        **files_in(f"{BUDGET_DIR}/finite_data/{{estimator}}", FIT_FILES),
    log:
        "logs/budget/{task}/finite_data_{estimator}.log",
    benchmark:
        "logs/budget/{task}/finite_data_{estimator}.benchmark.tsv"
    resources:
        mem_mb=3000,
        runtime=15,
    params:
        args=budget_finite_options,


use rule step as budget_table with:
    input:
        parts=budget_parts(),
        summary="results/summary.csv",
        code=sources("bellman.cli.summarise_budget"),
    output:
        report("results/budget/budget.csv", caption="../report/budget_table.rst", category="4. Tables"),
    log:
        "logs/budget/budget.log",
    params:
        args=budget_table_options,


use rule figure_template as budget_figure with:
    input:
        "results/budget/budget.csv",
        code=sources("bellman.cli.plot_budget"),
    output:
        figure_output("figures/ours/budget_{task}", "budget_figure.rst", "2. Q-functions learnt", "error budget"),
    log:
        "logs/figures/ours/budget_{task}.log",
    params:
        args=lambda w: options(table="results/budget/budget.csv", task=w.task),
