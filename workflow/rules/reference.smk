# Stage 2: the references the runs are measured against: the learned Q* of each task (the notebook's,
# by SGD on the long trajectory), the exact Q (solved on a grid), and how far the first is from the second.


use rule step as exact_q with:
    input:
        code=sources("bellman.cli.solve_exact"),
    output:
        q="results/exact/{task}/reward_{reward_of}/q_exact.npy",
        refinement="results/exact/{task}/reward_{reward_of}/refinement.csv",
    log:
        "logs/exact/{task}_{reward_of}.log",
    params:
        args=lambda w: options(
            task=w.task,
            problem=problem_of("ours", reward_of=w.reward_of),
            rtol=config["exact"]["rtol"],
            out_dir=f"results/exact/{w.task}/reward_{w.reward_of}",
        ),


use rule step as stationary_density with:
    input:
        code=sources("bellman.cli.solve_density"),
    output:
        "results/exact/{task}/stationary_density.npy",
    log:
        "logs/exact/{task}_stationary_density.log",
    params:
        args=lambda w, output: options(task=w.task, dynamics=as_json(config["problem"]["dynamics"]), out=output[0]),


use rule step as reference with:
    input:
        trajectory_files("ours", "{task}", "long"),
        exact=lambda w: exact_of("ours", w.task),
        code=sources("bellman.cli.train_qstar"),
    output:
        network="results/reference/{task}/q_star.pt",
        curve="results/reference/{task}/errors.csv",
    log:
        "logs/reference/{task}.log",
    benchmark:
        "logs/reference/{task}.benchmark.tsv"
    priority: 10
    resources:
        mem_mb=3000,
        runtime=30,
        gpu=gpus_of_training_job(),
    params:
        args=lambda w, input, output: options(
            task=w.task,
            estimator=config["reference"]["estimator"],
            trajectory=f"data/trajectories/ours/{w.task}/long",
            params=as_json({k: v for k, v in config["reference"].items() if k != "estimator"}),
            problem=problem_of("ours"),
            seed=config["seed"],
            device=config["device"],
            exact=input.exact,
            out=output.network,
            curve_out=output.curve,
        ),


use rule step as reference_table with:
    input:
        [[entry["reference"], entry["exact"], entry["density"]] for entry in reference_entries()],
        code=sources("bellman.cli.summarise_qstar"),
    output:
        report("results/reference/error_exact.csv", caption="../report/reference_table.rst", category="4. Tables"),
    log:
        "logs/reference/error_exact.log",
    params:
        args=lambda w, output: options(
            entries=as_json({"rows": reference_entries()}), problem=as_json(config["problem"]), out=output[0]
        ),
