# Stage 4: every figure of the notebook, in config `figures.formats`. Each rule derives from
# templates.smk's figure_template: its inputs, outputs, log, and the step with its own options.


use rule figure_template as q_figure with:
    input:
        lambda w: [f"{d}/{f}" for d in run_dirs(w.dataset, w.task, w.setting) for f in ("q.pt", "errors.csv")],
        reference=lambda w: reference_of(w.dataset, w.task),
        exact=lambda w: exact_of(w.dataset, w.task),
        density=lambda w: density_of(w.dataset, w.task),
        code=sources("bellman.cli.plot_q"),
    output:
        figure_output(
            "figures/{dataset}/q_{task}_{setting}", "q_figure.rst", "2. Q-functions learnt", "{dataset} data, {task}"
        ),
    log:
        "logs/figures/{dataset}/q_{task}_{setting}.log",
    params:
        # for the caption (workflow/report/q_figure.rst)
        setting=lambda w: setting_caption(w.task, w.setting),
        note=lambda w: reference_note(w.dataset, w.task),
        scale=lambda w: SCALE.name,
        args=q_figure_options,


use rule figure_template as diagnostics_figure with:
    input:
        lambda w: [
            f"{d}/{f}" for d in run_dirs(w.dataset, w.task, w.setting) for f in ("errors.csv", "diagnostics.csv")
        ],
        code=sources("bellman.cli.plot_diagnostics"),
    output:
        figure_output(
            "figures/{dataset}/diagnostics_{task}_{setting}",
            "diagnostics.rst",
            "2. Q-functions learnt",
            "{dataset} data, {task}",
        ),
    log:
        "logs/figures/{dataset}/diagnostics_{task}_{setting}.log",
    params:
        args=diagnostics_figure_options,


use rule figure_template as trajectory_figure with:
    input:
        lambda w: trajectory_files(w.dataset, w.task),
        density=lambda w: density_of(w.dataset, w.task),
        code=sources("bellman.cli.plot_trajectory"),
    output:
        figure_output("figures/{dataset}/trajectory_{task}", "trajectory.rst", "1. Datasets", "{dataset} data"),
    log:
        "logs/figures/{dataset}/trajectory_{task}.log",
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        args=trajectory_figure_options,


use rule figure_template as reference_figure with:
    input:
        [f"results/reference/{task}/errors.csv" for task in config["tasks"]],
        [exact_of("ours", task) for task in config["tasks"]],
        [f"{d}/errors.csv" for task in config["tasks"] for d in run_dirs("ours", task, "sgd")],
        code=sources("bellman.cli.plot_qstar"),
    output:
        figure_output(
            "figures/ours/reference_error", "reference_figure.rst", "2. Q-functions learnt", "against the truth"
        ),
    log:
        "logs/figures/ours/reference_error.log",
    params:
        args=options(
            reference_curves=[f"results/reference/{task}/errors.csv" for task in config["tasks"]],
            exact=[f"{task}={exact_of('ours', task)}" for task in config["tasks"]],
            runs=[d for task in config["tasks"] for d in run_dirs("ours", task, "sgd")],
            note=reference_note("ours", "control").removeprefix("Q*: "),
        ),


use rule figure_template as fourier_error_figure with:
    input:
        table="results/fourier_error.csv",
        code=sources("bellman.cli.plot_fourier_error"),
    output:
        figure_output(
            "figures/{dataset}/fourier_error_{task}",
            "fourier_error_figure.rst",
            "2. Q-functions learnt",
            "{dataset} data, {task}",
        ),
    log:
        "logs/figures/{dataset}/fourier_error_{task}.log",
    params:
        args=lambda w, input: options(table=input.table, dataset=w.dataset, task=w.task),


rule figures:
    input:
        figure_files("ours/reference_error"),
        [figure_files(name) for name in q_figure_names()],
        [figure_files(name) for name in q_figure_names("diagnostics")],
        [figure_files(f"{dataset}/trajectory_{task}") for dataset in DATASETS for task in config["tasks"]],
        [figure_files(f"{dataset}/fourier_error_{task}") for dataset in DATASETS for task in config["tasks"]],
