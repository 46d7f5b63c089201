# Helpers of the bellman study's rules (datasets, reference, methods, figures, budget, sweep): its
# registries' settings and wildcards, datasets, references, runs, sweep and error budget.
import functools

from rlstudy.bellman.data import authors_files
from rlstudy.bellman.data.trajectories import dataset_dynamics
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.bellman.learners.registry import OPTIMIZERS, all_settings
from rlstudy.bellman.learners.sweep import resolve_sweep, sweep_points
from rlstudy.core.config import ConfigError
from rlstudy.core.errors import InputError

# Every optimiser's settings by name (sgd, cbo, cbo-adaptive, ...): the registries name the runs.
SETTINGS = all_settings(config)


wildcard_constraints:
    dataset="ours|authors",
    task="evaluation|control",
    size="short|long",
    estimator=one_of(ESTIMATORS),
    reward_of="current|next",
    setting=one_of(SETTINGS),
    grid=r"[A-Za-z0-9_]+",
    point=r"[^/]+",
    cost="evaluations|seconds",
    reach="reach|reach_weighted",


def trajectory_files(dataset, task, size="short"):
    """Our trajectories come in two sizes; the authors' data is one 1e6-step trajectory per task."""
    return expand(
        "data/trajectories/{dataset}/{task}/{size}/{array}.npy",
        dataset=dataset,
        task=task,
        size=size,
        array=["states", "action_indices", "rewards"],
    )


# The datasets the methods run on: our own trajectories, and the authors' published ones when config
# `authors_data` says where to find them.
DATASETS = ["ours"] if config["authors_data"] == "none" else ["ours", "authors"]
AUTHORS_REFERENCE = "data/reference/authors/control/q_star.pt"


def authors_source_paths():
    """The files of a local authors_data folder (none for 'none' and 'download'), looked at, not opened:
    a FIFO, a device, a link out of the folder, a file over authors_files.MAX_FILE_BYTES or a path too
    long for the system stops the workflow here, by name, before any job."""
    source = config["authors_data"]
    if source in ("none", "download"):
        return []
    try:
        return [str(path) for path in authors_files.source_files(source)]
    except InputError as err:
        raise ConfigError(f"config key 'authors_data': {err}") from None


def authors_source_files():
    """The authors' files as inputs whose modification time does not count (ancient): a copy mounted
    afresh (a new mtime, the same bytes) reruns nothing; their contents do count, by
    authors_source_digests as a parameter, so replacing one reruns the import and what follows."""
    return [ancient(path) for path in AUTHORS_SOURCE_PATHS]


AUTHORS_SOURCE_PATHS = authors_source_paths()


@functools.cache
def _authors_source_digests():
    try:
        return {Path(path).name: authors_files.sha256(path) for path in AUTHORS_SOURCE_PATHS}
    except InputError as err:
        raise ConfigError(f"config key 'authors_data': {err}") from None


def authors_source_digests(wildcards):
    """The sha256 of each of the authors' files, the import rules' parameter: read (as the import step
    reads them) once, when the DAG first holds an import job, and not at all for targets that need none."""
    return _authors_source_digests()


def reference_of(dataset, task):
    """Q* the errors are measured against: the authors' published network for control on their data
    (they published no evaluation Q*), our own Q* otherwise."""
    if dataset == "authors" and task == "control":
        return AUTHORS_REFERENCE
    return f"results/reference/{task}/q_star.pt"


def setting_params(task, setting):
    return SETTINGS[setting].params[task]


def estimators_of(setting):
    return SETTINGS[setting].estimators


def seeds_of(setting, task):
    return SETTINGS[setting].seeds[task]


def setting_caption(task, setting):
    """What a figure's caption says of a setting: its optimiser, parameters, estimators and seeds."""
    return {
        "optimizer": SETTINGS[setting].optimizer,
        "params": setting_params(task, setting),
        "estimators": list(estimators_of(setting)),
        "seeds": list(seeds_of(setting, task)),
    }


def optimizer_of(setting):
    return OPTIMIZERS[SETTINGS[setting].optimizer]


def optimizer_sources(step, optimizer):
    """The code of a job that fits with an optimiser: the step's and the optimiser's module (the
    registry names the module; the step imports it when it fits)."""
    implementation = OPTIMIZERS[optimizer].module_name.removeprefix("rlstudy.")
    return list(dict.fromkeys([*sources(step), *sources(implementation)]))


def dynamics_of(dataset):
    """The dynamics a dataset's runs assume (bellman/data/trajectories.py: run_method's --from-config reads them too)."""
    return dataset_dynamics(config, dataset)


def problem_of(dataset, reward_of=None):
    """config `problem` with a dataset's dynamics (or another reward_of), as the steps read it (--problem)."""
    dynamics = dynamics_of(dataset) if reward_of is None else {**config["problem"]["dynamics"], "reward_of": reward_of}
    return as_json({"dynamics": dynamics, "gamma": config["problem"]["gamma"]})


def exact_of(dataset, task):
    """The exact Q a dataset's runs are measured against (reference.smk, rule exact_q)."""
    return f"results/exact/{task}/reward_{dynamics_of(dataset)['reward_of']}/q_exact.npy"


def density_of(dataset, task):
    """Where a dataset's data of a task are: the stationary density of the task's behaviour policy
    (reference.smk, rule stationary_density). It depends on the dynamics' dt and sigma, not on the
    reward, and the authors' trajectories follow our policies, so both datasets share one file."""
    return f"results/exact/{task}/stationary_density.npy"


def method_run_options(run, params, problem, input, output):
    """A run of run_method's options (rules run_method and sweep_run): the run's own (`run`: --optimizer to
    --trajectory), its --params and --problem, then those every run shares."""
    return options(
        *run,
        params=as_json(params),
        problem=problem,
        seed=config["seed"],
        device=config["device"],
        numerics=config["numerics"],
        reference=input.reference,
        exact=input.exact,
        out_dir=str(Path(output.curve).parent),
    )


# The files of a run of run_method (rules run_method and sweep_run), by name.
METHOD_RUN_FILES = {
    "network": "q.pt",
    "curve": "errors.csv",
    "diagnostics": "diagnostics.csv",
    "wall_time": "wall_time.csv",
}


def run_dirs(dataset, task, setting):
    return [
        f"results/runs/{dataset}/{task}/{setting}/{estimator}/seed{seed}"
        for estimator in estimators_of(setting)
        for seed in seeds_of(setting, task)
    ]


def dataset_run_dirs(dataset):
    return [d for task in config["tasks"] for setting in SETTINGS for d in run_dirs(dataset, task, setting)]


def all_run_dirs():
    return [d for dataset in DATASETS for d in dataset_run_dirs(dataset)]


def q_figure_names(kind="q"):
    """A figure per dataset, task and setting: kind "q" (the Q-functions learnt) or "diagnostics"."""
    return [
        f"{dataset}/{kind}_{task}_{setting}"
        for dataset in DATASETS
        for task in config["tasks"]
        for setting in SETTINGS
        if estimators_of(setting)
    ]


def reference_note(dataset, task):
    if reference_of(dataset, task) == AUTHORS_REFERENCE:
        return "Q*: the authors' published network (Q_ctrl_star.pt)"
    ref = config["reference"]
    return (
        f"Q*: SGD-{ref['estimator']} ({ref['ur_action']} action) on our {config['trajectories']['long']:,}-step "
        f"trajectory, {ref['epochs']} epochs"
    )


def exact_entries():
    """Each dataset and task's exact Q with the dynamics it was solved for (the greedy policies of
    control runs are evaluated exactly under them: bellman/problem/greedy.py)."""
    return [
        {
            "dataset": dataset,
            "task": task,
            "exact": exact_of(dataset, task),
            "dynamics": dynamics_of(dataset),
            "density": density_of(dataset, task),
        }
        for dataset in DATASETS
        for task in config["tasks"]
    ]


def reference_entries():
    """Each learned Q* with the exact Q it is measured against (reference.smk, rule reference_table)."""
    return [
        {
            "dataset": dataset,
            "task": task,
            "reference": reference_of(dataset, task),
            "exact": exact_of(dataset, task),
            "dynamics": dynamics_of(dataset),
            "made_by": reference_note(dataset, task),
            "density": density_of(dataset, task),
        }
        for dataset in DATASETS
        for task in config["tasks"]
    ]


# The CBO sweep's points by (grid, label), one run per seed (workflow/rules/sweep.smk); its base is a
# CBO setting's parameters with the sweep's overrides (bellman/learners/sweep.py).
SWEEP = resolve_sweep(config)
SWEEP_POINTS = {(point.grid, point.label): point for point in sweep_points(SWEEP)}


def sweep_curves():
    return [
        f"results/sweep/{grid}/{label}/seed{seed}/errors.csv" for grid, label in SWEEP_POINTS for seed in SWEEP["seeds"]
    ]


def recorded_sweep():
    """The sweep as its table records it (columns and provenance): the resolved base with the
    problem's gamma where the base once held its own, after beta (the table's column order)."""
    base = {}
    for key, value in SWEEP["base"].items():
        base[key] = value
        if key == "beta":
            base["gamma"] = config["problem"]["gamma"]
    return {**SWEEP, "base": base}


# The error budget (budget.smk): its config section, folders and files.
BUDGET = config["budget"]
BUDGET_DIR = "results/budget/{task}"
# The files of each fitted part of the budget, by name.
FIT_FILES = {"network": "q.pt", "error": "error.csv", "fit": "fit.csv"}


def budget_weights(task):
    """The states' weights of a task's budget: none (uniform), or the behaviour policy's stationary
    density (density_of; config `budget.weights: stationary`)."""
    if BUDGET["weights"] == "uniform":
        return []
    return [density_of("ours", task)]


def budget_parts():
    """Every fitted part's error.csv, of every task (the weighted reach only when the fits are weighted)."""
    reaches = ["reach"] if BUDGET["weights"] == "uniform" else ["reach", "reach_weighted"]
    return [
        f"results/budget/{task}/{part}/error.csv"
        for task in config["tasks"]
        for part in [
            *reaches,
            *[f"{kind}/{method}" for kind in ("population", "finite_data") for method in BUDGET["estimators"]],
        ]
    ]


def budget_outputs():
    """Every file of the fitted parts (the default target asks for them: targets.smk explains why)."""
    return [path.replace("error.csv", f) for path in budget_parts() for f in FIT_FILES.values()]


def budget_targets():
    return [
        "results/budget/budget.csv",
        *budget_outputs(),
        *[path for task in config["tasks"] for path in figure_files(f"ours/budget_{task}")],
    ]


# The steps' own options, one function for each rule, <rule>_options, its params `args`. Snakemake calls
# it with the job's wildcards, and its inputs and outputs where it names them; it gives the step's
# command line (options, common.smk).


def trajectory_options(wildcards):
    w = wildcards
    return options(
        task=w.task,
        size=w.size,
        steps=config["trajectories"][w.size],
        dynamics=as_json(config["problem"]["dynamics"]),
        seed=config["seed"],
        out_dir=f"data/trajectories/ours/{w.task}/{w.size}",
    )


def authors_trajectory_options(wildcards):
    return options(
        task=wildcards.task,
        source=config["authors_data"],
        steps=config["trajectories"]["authors"],
        trajectory_out=f"data/trajectories/authors/{wildcards.task}/short",
    )


def authors_reference_options(wildcards):
    return options(
        task="control",
        source=config["authors_data"],
        steps=config["trajectories"]["authors"],
        reference_out=AUTHORS_REFERENCE,
    )


def exact_q_options(wildcards):
    w = wildcards
    return options(
        task=w.task,
        problem=problem_of("ours", reward_of=w.reward_of),
        rtol=config["exact"]["rtol"],
        out_dir=f"results/exact/{w.task}/reward_{w.reward_of}",
    )


def reference_options(wildcards, input, output):
    return options(
        task=wildcards.task,
        estimator=config["reference"]["estimator"],
        trajectory=f"data/trajectories/ours/{wildcards.task}/long",
        params=as_json({k: v for k, v in config["reference"].items() if k != "estimator"}),
        problem=problem_of("ours"),
        seed=config["seed"],
        device=config["device"],
        exact=input.exact,
        out=output.network,
        curve_out=output.curve,
    )


def reference_table_options(wildcards, output):
    return options(entries=as_json({"rows": reference_entries()}), problem=as_json(config["problem"]), out=output[0])


def run_method_options(wildcards, input, output):
    """A main run: the setting, estimator and seed of the wildcards, on the dataset's short trajectory."""
    w = wildcards
    run = options(
        optimizer=SETTINGS[w.setting].optimizer,
        setting=w.setting,
        dataset=w.dataset,
        task=w.task,
        estimator=w.estimator,
        run_seed=w.seed,
        trajectory=f"data/trajectories/{w.dataset}/{w.task}/short",
    )
    return method_run_options(run, setting_params(w.task, w.setting), problem_of(w.dataset), input, output)


def sweep_run_options(wildcards, input, output):
    """A sweep point's run: the optimiser of the sweep's base setting (CBO) with the point's parameters
    under one setting name (cbo-sweep), stopped where it diverges."""
    run = options(
        optimizer=SETTINGS[config["cbo_sweep"]["setting"]].optimizer,
        setting="cbo-sweep",
        dataset="ours",
        task=SWEEP["task"],
        estimator=SWEEP["estimator"],
        run_seed=wildcards.seed,
        stop_on_divergence=True,
        trajectory=f"data/trajectories/ours/{SWEEP['task']}/short",
    )
    params = SWEEP_POINTS[(wildcards.grid, wildcards.point)].params
    return method_run_options(run, params, problem_of("ours"), input, output)


def summary_options(wildcards, input, output):
    return options(
        curves=input.curves,
        exact=as_json({"rows": exact_entries()}),
        problem=as_json(config["problem"]),
        converged_below=config["summary"]["converged_below"],
        out=output.table,
        stats_out=output.stats,
    )


def fourier_error_options(wildcards, input, output):
    """The exact entries without their density: not the step's input, left out so that its provenance
    names only what it read."""
    return options(
        curves=input.curves,
        exact=as_json({"rows": [{k: v for k, v in entry.items() if k != "density"} for entry in exact_entries()]}),
        problem=as_json(config["problem"]),
        out=output[0],
    )


def q_figure_options(wildcards, input):
    w = wildcards
    return options(
        task=w.task,
        setting=w.setting,
        reference=input.reference,
        exact=input.exact,
        density=input.density,
        reference_note=reference_note(w.dataset, w.task),
        runs=run_dirs(w.dataset, w.task, w.setting),
        problem=problem_of(w.dataset),
        converged_below=config["summary"]["converged_below"],
    )


def diagnostics_figure_options(wildcards):
    w = wildcards
    return options(
        task=w.task,
        optimizer=SETTINGS[w.setting].optimizer,
        setting=w.setting,
        runs=run_dirs(w.dataset, w.task, w.setting),
        converged_below=config["summary"]["converged_below"],
    )


def trajectory_figure_options(wildcards, input):
    w = wildcards
    return options(task=w.task, trajectory=f"data/trajectories/{w.dataset}/{w.task}/short", density=input.density)


def budget_reach_options(wildcards, input, output):
    return options(
        task=wildcards.task,
        exact=input.exact,
        points=BUDGET["points"],
        fit=as_json(BUDGET["fit"]),
        seed=config["seed"],
        weights=input.weights or None,
        fit_weights=wildcards.reach == "reach_weighted",
        start=input.start or None,
        out_dir=str(Path(output.error).parent),
    )


def budget_population_options(wildcards, input, output):
    return options(
        task=wildcards.task,
        estimator=wildcards.estimator,
        exact=input.exact,
        start=input.start,
        points=BUDGET["points"],
        fit=as_json(BUDGET["fit"]),
        problem=problem_of("ours"),
        ur_action=BUDGET["ur_action"],
        weights=input.weights or None,
        out_dir=str(Path(output.error).parent),
    )


def budget_finite_options(wildcards, input, output):
    return options(
        task=wildcards.task,
        estimator=wildcards.estimator,
        trajectory=str(Path(input[0]).parent),
        exact=input.exact,
        start=input.start,
        points=BUDGET["interpolation_points"],
        max_transitions=BUDGET["max_transitions"],
        fit=as_json(BUDGET["finite_fit"]),
        problem=problem_of("ours"),
        ur_action=BUDGET["ur_action"],
        seed=config["seed"],
        weights=input.weights or None,
        numerics=config["numerics"],
        out_dir=str(Path(output.error).parent),
    )


def budget_table_options(wildcards, input, output):
    return options(parts=input.parts, summary=input.summary, tasks=config["tasks"], out=output[0])


def sweep_table_options(wildcards, output):
    """The sweep in config order, not sorted: a grid's first parameter is the heatmap's columns, and the
    table must enumerate the points (and so find their folders) exactly as SWEEP_POINTS does."""
    return options(
        sweep=json.dumps(recorded_sweep()),
        results_dir="results/sweep",
        converged_below=config["summary"]["converged_below"],
        out=output[0],
    )


def cost_figure_options(wildcards):
    return options(
        cost=wildcards.cost,
        runs=dataset_run_dirs(wildcards.dataset),
        optimizers=sorted({setting.optimizer for setting in SETTINGS.values()}),
    )


def cost_table_options(wildcards, input, output):
    return options(curves=input.curves, bound=config["summary"]["converged_below"], out=output[0])
