# Helpers of the offline rules (offline.smk): run paths, parameter sets and budgets by environment kind.
import os
import re

from rlstudy.offline.envs import is_atari
from rlstudy.offline.learners import DIAGNOSED, LEARNERS

OFFLINE = config["offline"]
OFFLINE_RUN = "results/offline/{env}/seed{seed}"
OFFLINE_BUFFER = "data/offline/{env}/seed{seed}/buffer"
BUFFER_FILES = [
    f"{OFFLINE_BUFFER}/{array}.npy" for array in ("frames", "frame", "step", "action", "reward", "terminal", "cursor")
]


def offline_kind(env):
    return "atari" if is_atari(env) else "regular"


def offline_params(env):
    """The notebook's parameter set of the environment's kind, as JSON for the CLIs."""
    return as_json(OFFLINE[offline_kind(env)])


def offline_budget(env, stage):
    """Steps of a stage: the environment's own budget if the config lists one, else its kind's."""
    budgets = OFFLINE["budgets"]
    return budgets.get(env, budgets[offline_kind(env)])[stage]


def offline_mem_mb(env):
    # Atari: 1e6 uint8 84x84 frames are 7 GB, held three times while a checkpoint is serialised.
    return 32000 if is_atari(env) else 2000


def offline_runtime(env):
    return 48 * 60 if is_atari(env) else 30


def offline_run_args(wildcards):
    """The arguments every stage of a run takes (offline/run_arguments.py)."""
    return options(
        env=wildcards.env,
        run_seed=wildcards.seed,
        seed=config["seed"],
        device=config["device"],
        params=offline_params(wildcards.env),
        atari=as_json(OFFLINE["atari_preprocessing"]),
        evaluation_episodes=OFFLINE["evaluation_episodes"],
        curve_episodes=OFFLINE["curve_episodes"],
    )


# The files of a learner's run (the behavioural DQN's too), by name.
LEARNER_FILES = {"q": "q.pt", "evaluations": "evaluations.csv", "diagnostics": "diagnostics.csv"}


def offline_run_dirs(env):
    return [f"results/offline/{env}/seed{seed}" for seed in OFFLINE["seeds"]]


OFFLINE_LEARNERS = list(DIAGNOSED)  # the behavioural DQN, then the registry's offline learners


def learner_sources(algorithm):
    """The code of an offline learner's training job: the step's and its learner class's module."""
    return [*sources("offline.cli.train_offline"), *sources(f"offline.{LEARNERS[algorithm].module}")]


def offline_options(algorithm):
    """An offline learner's own options from the config's `offline` section, as JSON for train_offline."""
    return as_json(LEARNERS[algorithm].options(OFFLINE))


def offline_targets():
    envs = OFFLINE["environments"]
    return [
        *[figure_files(f"offline_{env}") for env in envs],
        *[figure_files(f"offline/{env}_{learner}_diagnostics") for env in envs for learner in OFFLINE_LEARNERS],
        "results/offline/summary.csv",
    ]


def offline_run_files(env):
    return [
        f"results/offline/{env}/seed{seed}/{f}"
        for seed in OFFLINE["seeds"]
        for f in ["buffer/performance.csv", *(f"{learner}/evaluations.csv" for learner in OFFLINE_LEARNERS)]
    ]


def offline_diagnostics_files(env):
    return [
        f"results/offline/{env}/seed{seed}/{learner}/diagnostics.csv"
        for seed in OFFLINE["seeds"]
        for learner in OFFLINE_LEARNERS
    ]


def offline_diagnostics_figures():
    """Each learner's diagnostics figure, in the report beside the learning curve (offline_figure makes them)."""
    return [
        path
        for learner in OFFLINE_LEARNERS
        for path in figure_output(
            f"figures/offline/{{env}}_{learner}_diagnostics", "diagnostics.rst", "6. Offline RL", "{env}"
        )
    ]


# The steps' own options, one function for each rule of offline.smk, <rule>_options, its params `args`
# (as in bellman_common.smk).


def offline_behavioural_options(wildcards, output):
    w = wildcards
    return options(
        *offline_run_args(w),
        steps=offline_budget(w.env, "behavioural"),
        out_dir=os.path.dirname(output.q),
        tensorboard=tensorboard_dir(f"offline/{w.env}/seed{w.seed}/behavioural"),
    )


def offline_buffer_options(wildcards, input, output):
    return options(
        *offline_run_args(wildcards),
        policy=input.policy,
        steps=offline_budget(wildcards.env, "buffer"),
        low_noise_p=OFFLINE["low_noise_p"],
        rand_action_p=OFFLINE["rand_action_p"],
        buffer_dir=os.path.dirname(output[0]),
        out_dir=os.path.dirname(output.performance),
    )


def offline_train_options(wildcards, input, output):
    w = wildcards
    return options(
        *offline_run_args(w),
        algorithm=w.algorithm,
        options=offline_options(w.algorithm),
        iterations=offline_budget(w.env, "offline"),
        buffer_dir=os.path.dirname(input[0]),
        out_dir=os.path.dirname(output.q),
        tensorboard=tensorboard_dir(f"offline/{w.env}/seed{w.seed}/{w.algorithm}"),
    )


def offline_summary_options(wildcards):
    return options(
        runs=[d for env in OFFLINE["environments"] for d in offline_run_dirs(env)],
        out="results/offline/summary.csv",
    )
