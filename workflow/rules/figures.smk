# Stage 4: every figure of the notebook, as PNG and PDF.


rule q_figure:
    input:
        lambda w: [f"{d}/{f}" for d in run_dirs(w.task, w.optimizer) for f in ("q.pt", "errors.csv")],
        reference="results/reference/{task}/q_star.pt",
        script=cli("plot_q"),
    output:
        expand("figures/q_{{task}}_{{optimizer}}.{fmt}", fmt=config["figures"]["formats"]),
    params:
        runs=lambda w: run_dirs(w.task, w.optimizer),
        note=reference_note(),
        converged_below=config["summary"]["converged_below"],
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/q_{task}_{optimizer}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.cli.plot_q --task {wildcards.task} --optimizer {wildcards.optimizer}"
        " --reference {input.reference} --reference-note '{params.note}' --runs {params.runs}"
        " --converged-below {params.converged_below} --formats {params.formats} --dpi {params.dpi}"
        " --out-prefix figures/q_{wildcards.task}_{wildcards.optimizer} > {log} 2>&1"


rule trajectory_figure:
    input:
        trajectory_files("{task}", "short"),
        script=cli("plot_trajectory"),
    output:
        expand("figures/trajectory_{{task}}.{fmt}", fmt=config["figures"]["formats"]),
    params:
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
    log:
        "logs/figures/trajectory_{task}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.cli.plot_trajectory --task {wildcards.task}"
        " --trajectory data/trajectories/{wildcards.task}/short --formats {params.formats} --dpi {params.dpi}"
        " --out-prefix figures/trajectory_{wildcards.task} > {log} 2>&1"


rule figures:
    input:
        [figure_files(name) for name in q_figure_names()],
        [figure_files(f"trajectory_{task}") for task in config["tasks"]],
