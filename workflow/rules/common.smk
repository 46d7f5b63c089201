# Helpers shared by the rules: names of runs, their parameters, and the command of each step.
import json


wildcard_constraints:
    task="evaluation|control",
    size="short|long",
    method="DS|UR|BFF",
    seed=r"\d+",
    optimizer=r"sgd|cbo(-[a-z0-9_]+)?",


def as_json(values):
    """Parameters for a CLI; a change of any value reruns the rule (Snakemake tracks params)."""
    return json.dumps(values, sort_keys=True)


def cli(name):
    """The script of a step, listed as an input so that editing it reruns the rule."""
    return f"src/rlstudy/cli/{name}.py"


def trajectory_files(task, size):
    return expand("data/trajectories/{task}/{size}/{array}.npy", task=task, size=size,
                  array=["states", "action_indices", "rewards"])


OPTIMIZERS = ["sgd", *config["cbo"]["settings"]]


def optimizer_params(task, optimizer):
    if optimizer == "sgd":
        return config["sgd"][task]
    return config["cbo"]["settings"][optimizer]


def methods_of(optimizer):
    return config["sgd"]["methods"] if optimizer == "sgd" else config["cbo"]["methods"]


def seeds_of(optimizer):
    return config["seeds"] if optimizer == "sgd" else config["cbo"]["seeds"]


def run_dirs(task, optimizer):
    return [f"results/runs/{task}/{optimizer}/{method}/seed{seed}"
            for method in methods_of(optimizer) for seed in seeds_of(optimizer)]


def all_run_dirs():
    return [d for task in config["tasks"] for opt in OPTIMIZERS for d in run_dirs(task, opt)]


def figure_files(name):
    return expand("figures/{name}.{fmt}", name=name, fmt=config["figures"]["formats"])


def q_figure_names():
    return [f"q_{task}_{opt}" for task in config["tasks"] for opt in OPTIMIZERS if methods_of(opt)]


def gpus_of_training_job():
    """GPUs a training job (Q*, SGD and CBO runs) asks for: one when config `device` is cuda, so that
    the SLURM executor adds --gpus=1; none otherwise (0 adds nothing, and a local run without
    --resources gpu=N does not limit it)."""
    return 1 if config["device"] == "cuda" else 0


def reference_note():
    ref = config["reference"]
    return (f"Q*: SGD-{ref['method']} ({ref['ur_action']} action) on the {config['trajectories']['long']:,}-step "
            f"trajectory, {ref['epochs']} epochs")
