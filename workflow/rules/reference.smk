# Stage 2: the references the runs are measured against: the learned Q* of each task (the notebook's,
# by SGD on the long trajectory), the exact Q (solved on a grid), and how far the first is from the second.


rule exact_q:
    input:
        code=sources("bellman.cli.solve_exact"),
    output:
        q="results/exact/{task}/reward_{reward_of}/q_exact.npy",
        refinement="results/exact/{task}/reward_{reward_of}/refinement.csv",
    log:
        "logs/exact/{task}_{reward_of}.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        problem=lambda w: problem_of("ours", reward_of=w.reward_of),
        rtol=config["exact"]["rtol"],
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.bellman.cli.solve_exact --task {wildcards.task:q} --problem {params.problem:q}"
        " --rtol {params.rtol:q} --out-dir results/exact/{wildcards.task:q}/reward_{wildcards.reward_of:q} > {log:q} 2>&1"


rule stationary_density:
    input:
        code=sources("bellman.cli.solve_density"),
    output:
        "results/exact/{task}/stationary_density.npy",
    log:
        "logs/exact/{task}_stationary_density.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        dynamics=as_json(config["problem"]["dynamics"]),
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.bellman.cli.solve_density --task {wildcards.task:q} --dynamics {params.dynamics:q}"
        " --out {output:q} > {log:q} 2>&1"


rule reference:
    input:
        trajectory_files("ours", "{task}", "long"),
        exact=lambda w: exact_of("ours", w.task),
        code=sources("bellman.cli.train_reference"),
    output:
        network="results/reference/{task}/q_star.pt",
        curve="results/reference/{task}/errors.csv",
    log:
        "logs/reference/{task}.log",
    benchmark:
        "logs/reference/{task}.benchmark.tsv"
    priority: 10
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
        gpu=gpus_of_training_job(),
    params:
        estimator=config["reference"]["estimator"],
        sgd=as_json({k: v for k, v in config["reference"].items() if k != "estimator"}),
        problem=problem_of("ours"),
        seed=config["seed"],
        device=config["device"],
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.bellman.cli.train_reference --task {wildcards.task:q} --estimator {params.estimator:q}"
        " --trajectory data/trajectories/ours/{wildcards.task:q}/long --params {params.sgd:q}"
        " --problem {params.problem:q} --seed {params.seed:q} --device {params.device:q}"
        " --exact {input.exact:q} --out {output.network:q} --curve-out {output.curve:q} > {log:q} 2>&1"


rule reference_table:
    input:
        [[entry["reference"], entry["exact"], entry["density"]] for entry in reference_entries()],
        code=sources("bellman.cli.summarise_references"),
    output:
        report("results/reference/error_exact.csv", caption="../report/reference_table.rst", category="4. Tables"),
    log:
        "logs/reference/error_exact.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        entries=as_json({"rows": reference_entries()}),
        gamma=config["problem"]["gamma"],
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.bellman.cli.summarise_references --entries {params.entries:q} --gamma {params.gamma:q}"
        " --out {output:q} > {log:q} 2>&1"
