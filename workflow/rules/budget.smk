# The error budget of each task (bellman/budget.py, docs/bellman.md "The error budget"): how far the
# network gets from the exact Q, part by part, each part measured by its own fit: the network's reach
# (regression to the exact Q), the minimiser of each estimator's population residual, the minimiser of
# its sampled residual on our short trajectory; beside them the runs' final errors (results/summary.csv).


rule budget_reach:
    input:
        exact=lambda w: exact_of("ours", w.task),
        weights=lambda w: budget_weights(w.task),
        code=sources("bellman.cli.budget_reach"),
    output:
        network=f"{BUDGET_DIR}/reach/q.pt",
        error=f"{BUDGET_DIR}/reach/error.csv",
        fit=f"{BUDGET_DIR}/reach/fit.csv",
    log:
        "logs/budget/{task}/reach.log",
    benchmark:
        "logs/budget/{task}/reach.benchmark.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        points=BUDGET["points"],
        fit=as_json(BUDGET["fit"]),
        seed=config["seed"],
        weights=lambda w: budget_weights_args(w.task),
        fit_weights=[],  # every point alike; budget_reach_weighted weighs them by --weights
        start=[],  # from the seeded initialisation
        out_dir=lambda w, output: str(Path(output.error).parent),
    shell:
        "python -m rlstudy.core.warmstart rlstudy.bellman.cli.budget_reach --task {wildcards.task:q} --exact {input.exact:q}"
        " --points {params.points:q} --fit {params.fit:q} --seed {params.seed:q} {params.weights:q}"
        " {params.fit_weights:q} {params.start:q} --out-dir {params.out_dir:q} > {log:q} 2>&1"


# The reach where the data are: the same regression, its points weighted as the residual fits weigh
# them, started from the uniform reach (planned only when config budget.weights is not uniform:
# budget_parts).
use rule budget_reach as budget_reach_weighted with:
    input:
        exact=lambda w: exact_of("ours", w.task),
        weights=lambda w: budget_weights(w.task),
        start=f"{BUDGET_DIR}/reach/q.pt",
        code=sources("bellman.cli.budget_reach"),
    output:
        network=f"{BUDGET_DIR}/reach_weighted/q.pt",
        error=f"{BUDGET_DIR}/reach_weighted/error.csv",
        fit=f"{BUDGET_DIR}/reach_weighted/fit.csv",
    log:
        "logs/budget/{task}/reach_weighted.log",
    benchmark:
        "logs/budget/{task}/reach_weighted.benchmark.tsv"
    params:
        points=BUDGET["points"],
        fit=as_json(BUDGET["fit"]),
        seed=config["seed"],
        weights=lambda w: budget_weights_args(w.task),
        fit_weights=["--fit-weights"],
        start=lambda w, input: ["--start", input.start],
        out_dir=lambda w, output: str(Path(output.error).parent),


rule budget_population:
    input:
        exact=lambda w: exact_of("ours", w.task),
        start=f"{BUDGET_DIR}/reach/q.pt",
        weights=lambda w: budget_weights(w.task),
        code=sources("bellman.cli.budget_population"),
    output:
        network=f"{BUDGET_DIR}/population/{{estimator}}/q.pt",
        error=f"{BUDGET_DIR}/population/{{estimator}}/error.csv",
        fit=f"{BUDGET_DIR}/population/{{estimator}}/fit.csv",
    log:
        "logs/budget/{task}/population_{estimator}.log",
    benchmark:
        "logs/budget/{task}/population_{estimator}.benchmark.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        points=BUDGET["points"],
        fit=as_json(BUDGET["fit"]),
        problem=problem_of("ours"),
        ur_action=BUDGET["ur_action"],
        weights=lambda w: budget_weights_args(w.task),
        out_dir=lambda w, output: str(Path(output.error).parent),
    shell:
        "python -m rlstudy.core.warmstart rlstudy.bellman.cli.budget_population --task {wildcards.task:q} --estimator {wildcards.estimator:q}"
        " --exact {input.exact:q} --start {input.start:q} --points {params.points:q} --fit {params.fit:q}"
        " --problem {params.problem:q} --ur-action {params.ur_action:q} {params.weights:q}"
        " --out-dir {params.out_dir:q} > {log:q} 2>&1"


rule budget_finite:
    input:
        trajectory_files("ours", "{task}"),
        exact=lambda w: exact_of("ours", w.task),
        start=f"{BUDGET_DIR}/reach/q.pt",
        weights=lambda w: budget_weights(w.task),
        code=sources("bellman.cli.budget_finite"),
    output:
        network=f"{BUDGET_DIR}/finite_data/{{estimator}}/q.pt",
        error=f"{BUDGET_DIR}/finite_data/{{estimator}}/error.csv",
        fit=f"{BUDGET_DIR}/finite_data/{{estimator}}/fit.csv",
    log:
        "logs/budget/{task}/finite_data_{estimator}.log",
    benchmark:
        "logs/budget/{task}/finite_data_{estimator}.benchmark.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=15,
    params:
        trajectory=lambda w, input: str(Path(input[0]).parent),
        points=BUDGET["interpolation_points"],
        max_transitions=BUDGET["max_transitions"],
        fit=as_json(BUDGET["finite_fit"]),
        problem=problem_of("ours"),
        ur_action=BUDGET["ur_action"],
        seed=config["seed"],
        numerics=config["numerics"],
        weights=lambda w: budget_weights_args(w.task),
        out_dir=lambda w, output: str(Path(output.error).parent),
    shell:
        "python -m rlstudy.core.warmstart rlstudy.bellman.cli.budget_finite --task {wildcards.task:q} --estimator {wildcards.estimator:q}"
        " --trajectory {params.trajectory:q} --exact {input.exact:q} --start {input.start:q}"
        " --points {params.points:q} --max-transitions {params.max_transitions:q} --fit {params.fit:q}"
        " --problem {params.problem:q} --ur-action {params.ur_action:q} --seed {params.seed:q} {params.weights:q}"
        " --numerics {params.numerics:q} --out-dir {params.out_dir:q} > {log:q} 2>&1"


rule budget_table:
    input:
        parts=budget_parts(),
        summary="results/summary.csv",
        code=sources("bellman.cli.summarise_budget"),
    output:
        report("results/budget/budget.csv", caption="../report/budget_table.rst", category="4. Tables"),
    log:
        "logs/budget/budget.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        tasks=config["tasks"],
    shell:
        "python -m rlstudy.core.warmstart rlstudy.bellman.cli.summarise_budget --parts {input.parts:q} --summary {input.summary:q}"
        " --tasks {params.tasks:q} --out {output:q} > {log:q} 2>&1"


use rule figure_template as budget_figure with:
    input:
        "results/budget/budget.csv",
        code=sources("bellman.cli.plot_budget"),
    output:
        figure_output("figures/ours/budget_{task}", "budget_figure.rst", "2. Q-functions learnt", "error budget"),
    log:
        "logs/figures/ours/budget_{task}.log",
    params:
        **FIGURE,
        step="bellman.cli.plot_budget",
        args=lambda w: ["--table", "results/budget/budget.csv", "--task", w.task],
