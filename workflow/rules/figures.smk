# Stage 4: every figure of the notebook, as PNG and PDF.


rule q_figure:
    input:
        lambda w: [f"{d}/{f}" for d in run_dirs(w.dataset, w.task, w.optimizer) for f in ("q.pt", "errors.csv")],
        reference=lambda w: reference_of(w.dataset, w.task),
        exact=lambda w: exact_of(w.dataset, w.task),
        code=sources("bellman.cli.plot_q"),
    output:
        figure_output("figures/{dataset}/q_{task}_{optimizer}", "q_figure.rst", "2. Q-functions learnt",
                      "{dataset} data, {task}"),
    params:
        runs=lambda w: run_dirs(w.dataset, w.task, w.optimizer),
        note=lambda w: reference_note(w.dataset, w.task),
        gamma=config["reference"]["gamma"],
        dynamics=lambda w: as_json(dynamics_of(w.dataset)),
        converged_below=config["summary"]["converged_below"],
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/{dataset}/q_{task}_{optimizer}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.plot_q --task {wildcards.task} --optimizer {wildcards.optimizer}"
        " --reference {input.reference} --exact {input.exact} --reference-note {params.note:q} --runs {params.runs}"
        " --gamma {params.gamma} --dynamics {params.dynamics:q}"
        " --converged-below {params.converged_below} --formats {params.formats} --dpi {params.dpi}"
        " --out-prefix figures/{wildcards.dataset}/q_{wildcards.task}_{wildcards.optimizer} > {log} 2>&1"


rule diagnostics_figure:
    input:
        lambda w: [f"{d}/{f}" for d in run_dirs(w.dataset, w.task, w.optimizer)
                   for f in ("errors.csv", "diagnostics.csv")],
        code=sources("bellman.cli.plot_diagnostics"),
    output:
        figure_output("figures/{dataset}/diagnostics_{task}_{optimizer}", "diagnostics.rst", "2. Q-functions learnt",
                      "{dataset} data, {task}"),
    params:
        runs=lambda w: run_dirs(w.dataset, w.task, w.optimizer),
        converged_below=config["summary"]["converged_below"],
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/{dataset}/diagnostics_{task}_{optimizer}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.plot_diagnostics --task {wildcards.task} --optimizer {wildcards.optimizer}"
        " --runs {params.runs} --converged-below {params.converged_below} --formats {params.formats}"
        " --dpi {params.dpi} --out-prefix figures/{wildcards.dataset}/diagnostics_{wildcards.task}_{wildcards.optimizer}"
        " > {log} 2>&1"


rule trajectory_figure:
    input:
        lambda w: trajectory_files(w.dataset, w.task),
        code=sources("bellman.cli.plot_trajectory"),
    output:
        figure_output("figures/{dataset}/trajectory_{task}", "trajectory.rst", "1. Datasets", "{dataset} data"),
    params:
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/{dataset}/trajectory_{task}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.plot_trajectory --task {wildcards.task}"
        " --trajectory data/trajectories/{wildcards.dataset}/{wildcards.task}/short --formats {params.formats}"
        " --dpi {params.dpi} --out-prefix figures/{wildcards.dataset}/trajectory_{wildcards.task} > {log} 2>&1"


rule reference_figure:
    input:
        [f"results/reference/{task}/errors.csv" for task in config["tasks"]],
        [exact_of("ours", task) for task in config["tasks"]],
        [f"{d}/errors.csv" for task in config["tasks"] for d in run_dirs("ours", task, "sgd")],
        code=sources("bellman.cli.plot_reference"),
    output:
        figure_output("figures/ours/reference_error", "reference_figure.rst", "2. Q-functions learnt", "against the truth"),
    params:
        curves=[f"results/reference/{task}/errors.csv" for task in config["tasks"]],
        exact=[f"{task}={exact_of('ours', task)}" for task in config["tasks"]],
        runs=[d for task in config["tasks"] for d in run_dirs("ours", task, "sgd")],
        note=reference_note("ours", "control").removeprefix("Q*: "),
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/ours/reference_error.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.plot_reference --reference-curves {params.curves} --exact {params.exact}"
        " --runs {params.runs} --note {params.note:q} --formats {params.formats} --dpi {params.dpi}"
        " --out-prefix figures/ours/reference_error > {log} 2>&1"


rule figures:
    input:
        figure_files("ours/reference_error"),
        [figure_files(name) for name in q_figure_names()],
        [figure_files(name) for name in q_figure_names("diagnostics")],
        [figure_files(f"{dataset}/trajectory_{task}") for dataset in DATASETS for task in config["tasks"]],
