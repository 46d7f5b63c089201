# Stage 3b: what CBO needs. A sweep over CBO's parameters (grids of two, config `cbo_sweep`) on our
# trajectory, its tidy table and heatmaps; and CBO against SGD at equal cost, from the main runs.


rule sweep_run:
    input:
        trajectory_files("ours", SWEEP["task"]),
        reference=reference_of("ours", SWEEP["task"]),
        exact=exact_of("ours", SWEEP["task"]),
        code=sources("bellman.cli.run_method"),
    output:
        network="results/sweep/{grid}/{point}/seed{seed}/q.pt",
        curve="results/sweep/{grid}/{point}/seed{seed}/errors.csv",
        diagnostics="results/sweep/{grid}/{point}/seed{seed}/diagnostics.csv",
        wall_time="results/sweep/{grid}/{point}/seed{seed}/wall_time.csv",
    params:
        cbo=lambda w: as_json(SWEEP_POINTS[(w.grid, w.point)].params),
        task=SWEEP["task"],
        method=SWEEP["method"],
        dynamics=as_json(config["dynamics"]),
        seed=config["seed"],
        device=config["device"],
    log:
        "logs/sweep/{grid}/{point}/seed{seed}.log",
    benchmark:
        "logs/sweep/{grid}/{point}/seed{seed}.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
        gpu=gpus_of_training_job(),
    conda:
        "../../envs.yaml"
    # Every point shares the optimiser name, hence the initial swarm (for equal N) and the sample
    # stream: the points differ by their parameters only. Divergence is a result here, not an error.
    shell:
        "python -m rlstudy.bellman.cli.run_method --dataset ours --optimizer cbo-sweep --task {params.task}"
        " --method {params.method} --run-seed {wildcards.seed} --seed {params.seed}"
        " --trajectory data/trajectories/ours/{params.task}/short --reference {input.reference}"
        " --exact {input.exact} --params '{params.cbo}' --dynamics '{params.dynamics}' --device {params.device} --stop-on-divergence"
        " --out-dir 'results/sweep/{wildcards.grid}/{wildcards.point}/seed{wildcards.seed}' > '{log}' 2>&1"


rule sweep_table:
    input:
        curves=sweep_curves(),
        code=sources("bellman.cli.summarise_sweep"),
    output:
        report("results/sweep/cbo_sweep.csv", caption="../report/sweep_table.rst", category="4. Tables"),
    params:
        # In config order, not sorted: a grid's first parameter is the heatmap's columns, and the
        # table must enumerate the points (and so find their folders) exactly as SWEEP_POINTS does.
        sweep=json.dumps(SWEEP),
        converged_below=config["summary"]["converged_below"],
    log:
        "logs/sweep/table.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.summarise_sweep --sweep '{params.sweep}' --results-dir results/sweep"
        " --converged-below {params.converged_below} --out {output} > {log} 2>&1"


rule sweep_figure:
    input:
        table="results/sweep/cbo_sweep.csv",
        code=sources("bellman.cli.plot_sweep"),
    output:
        figure_output("figures/ours/cbo_sweep", "cbo_sweep.rst", "3. What CBO needs", "parameter sweep"),
    params:
        converged_below=config["summary"]["converged_below"],
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/ours/cbo_sweep.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.plot_sweep --table {input.table} --converged-below {params.converged_below}"
        " --formats {params.formats} --dpi {params.dpi} --out-prefix figures/ours/cbo_sweep > {log} 2>&1"


rule cost_figure:
    input:
        lambda w: [f"{d}/{f}" for d in dataset_run_dirs(w.dataset) for f in ("errors.csv", "wall_time.csv")],
        code=sources("bellman.cli.plot_cost"),
    output:
        figure_output("figures/{dataset}/cost_{cost}", "cost.rst", "3. What CBO needs", "equal cost, {dataset} data"),
    params:
        runs=lambda w: dataset_run_dirs(w.dataset),
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/{dataset}/cost_{cost}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.plot_cost --cost {wildcards.cost} --runs {params.runs} --formats {params.formats}"
        " --dpi {params.dpi} --out-prefix figures/{wildcards.dataset}/cost_{wildcards.cost} > {log} 2>&1"


rule cost_table:
    input:
        curves=[f"{d}/errors.csv" for d in all_run_dirs()],
        code=sources("bellman.cli.summarise_cost"),
    output:
        report("results/cost.csv", caption="../report/cost_table.rst", category="4. Tables"),
    params:
        bound=config["summary"]["converged_below"],
    log:
        "logs/cost_table.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.summarise_cost --curves {input.curves} --bound {params.bound}"
        " --out {output} > {log} 2>&1"
