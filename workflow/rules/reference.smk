# Stage 2: the references the runs are measured against: the learned Q* of each task (the notebook's,
# by SGD on the long trajectory), the exact Q (solved on a grid), and how far the first is from the second.


rule exact_q:
    input:
        code=sources("bellman.cli.solve_exact"),
    output:
        q="results/exact/{task}/reward_{reward_of}/q_exact.npy",
        refinement="results/exact/{task}/reward_{reward_of}/refinement.csv",
    params:
        gamma=config["reference"]["gamma"],
        dynamics=lambda w: as_json({**config["dynamics"], "reward_of": w.reward_of}),
        rtol=config["exact"]["rtol"],
    log:
        "logs/exact/{task}_{reward_of}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.solve_exact --task {wildcards.task} --gamma {params.gamma}"
        " --dynamics '{params.dynamics}' --rtol {params.rtol}"
        " --out-dir results/exact/{wildcards.task}/reward_{wildcards.reward_of} > {log} 2>&1"


rule reference:
    input:
        trajectory_files("ours", "{task}", "long"),
        exact=lambda w: exact_of("ours", w.task),
        code=sources("bellman.cli.train_reference"),
    output:
        network="results/reference/{task}/q_star.pt",
        curve="results/reference/{task}/errors.csv",
    params:
        method=config["reference"]["method"],
        sgd=as_json({k: v for k, v in config["reference"].items() if k != "method"}),
        dynamics=as_json(config["dynamics"]),
        seed=config["seed"],
        device=config["device"],
    log:
        "logs/reference/{task}.log",
    benchmark:
        "logs/reference/{task}.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
        gpu=gpus_of_training_job(),
    priority: 10
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.train_reference --task {wildcards.task} --method {params.method}"
        " --trajectory data/trajectories/ours/{wildcards.task}/long --params '{params.sgd}'"
        " --dynamics '{params.dynamics}' --seed {params.seed} --device {params.device}"
        " --exact {input.exact} --out {output.network} --curve-out {output.curve} > {log} 2>&1"


rule reference_table:
    input:
        [[entry["reference"], entry["exact"]] for entry in reference_entries()],
        code=sources("bellman.cli.summarise_references"),
    output:
        report("results/reference/error_exact.csv", caption="../report/reference_table.rst", category="4. Tables"),
    params:
        entries=as_json({"rows": reference_entries()}),
        gamma=config["reference"]["gamma"],
    log:
        "logs/reference/error_exact.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.bellman.cli.summarise_references --entries {params.entries:q} --gamma {params.gamma} --out {output} > {log} 2>&1"
