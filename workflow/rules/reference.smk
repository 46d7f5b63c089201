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
        args=exact_q_options,


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
        args=reference_options,


use rule step as reference_table with:
    input:
        [[entry["reference"], entry["exact"], entry["density"]] for entry in reference_entries()],
        code=sources("bellman.cli.summarise_qstar"),
    output:
        report("results/reference/error_exact.csv", caption="../report/reference_table.rst", category="4. Tables"),
    log:
        "logs/reference/error_exact.log",
    params:
        args=reference_table_options,
