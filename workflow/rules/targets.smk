# Every run's own files, not only the figures and tables drawn from them: when a job is killed after
# Snakemake deleted its outputs (a forced rerun), the next plain `snakemake` sees them missing and
# rebuilds them, though everything downstream still exists (docs/reliability.md, "Interrupted runs").
def run_outputs():
    runs = [f"{d}/{f}" for d in all_run_dirs() for f in METHOD_RUN_FILES.values()]
    sweep = [c.replace("errors.csv", f) for c in sweep_curves() for f in METHOD_RUN_FILES.values()]
    references = [f"results/reference/{task}/{f}" for task in config["tasks"] for f in ("q_star.pt", "errors.csv")]
    references += sorted(
        {
            exact_of(dataset, task).replace("q_exact.npy", f)
            for dataset in DATASETS
            for task in config["tasks"]
            for f in ("q_exact.npy", "refinement.csv")
        }
    )
    references += sorted({density_of(dataset, task) for dataset in DATASETS for task in config["tasks"]})
    references += sorted({reference_of(dataset, task) for dataset in DATASETS for task in config["tasks"]})
    trajectories = [
        path
        for task in config["tasks"]
        for path in [
            *trajectory_files("ours", task, "short"),
            *trajectory_files("ours", task, "long"),
            *(trajectory_files("authors", task) if "authors" in DATASETS else []),
        ]
    ]
    agents = [path for agent in AGENTS for path in agent_run_files(agent)]
    offline = [
        path.format(env=env, seed=seed)
        for env in OFFLINE["environments"]
        for seed in OFFLINE["seeds"]
        for path in [*BUFFER_FILES, f"{OFFLINE_RUN}/buffer/episodes.csv", f"{OFFLINE_RUN}/buffer/performance.csv"]
    ]
    offline += [
        f"results/offline/{env}/seed{seed}/{learner}/{f}"
        for env in OFFLINE["environments"]
        for seed in OFFLINE["seeds"]
        for learner in OFFLINE_LEARNERS
        for f in LEARNER_FILES.values()
    ]
    return [*runs, *sweep, *references, *trajectories, *agents, *offline]
