# Helpers of the basics agents' rules (basics.smk): run folders, model files, figure names.

BASICS_AGENTS = ["qtable", "linear_q", "dqn", "ddpg"]
BASICS_RUNTIME = {"qtable": 15, "linear_q": 30, "dqn": 60, "ddpg": 60}  # minutes, at notebook scale, shared CPU


def basics_run_dirs(agent):
    return [f"results/agents/{agent}/seed{seed}" for seed in config[agent]["seeds"]]


def basics_model_file(agent):
    return "q_table.npy" if agent == "qtable" else "model.pt"


def basics_run_files(agent):
    return [f"{d}/{f}" for d in basics_run_dirs(agent)
            for f in ("returns.csv", "evaluation.csv", "diagnostics.csv", basics_model_file(agent))]


def agents_summary_runs():
    """The run folders of every agent, the basics notebook's and MPO, for results/agents/summary.csv."""
    return [d for agent in BASICS_AGENTS for d in basics_run_dirs(agent)] + [
        f"results/agents/mpo/seed{seed}" for seed in config["mpo"]["seeds"]]


def basics_figure_names(agent):
    return [f"{agent}_learning_curve", f"{agent}_diagnostics", "dqn_max_q" if agent == "dqn" else f"{agent}_value_policy"]


def basics_targets():
    """Every figure and GIF of the basics agents (rule all builds them)."""
    return [path for agent in BASICS_AGENTS
            for path in [*(expand("figures/agents/{name}.{fmt}", name=basics_figure_names(agent),
                                  fmt=config["figures"]["formats"])),
                         f"figures/agents/{agent}_rollout.gif"]]
