# Stage 2: the reference Q* of each task, by SGD on the long trajectory.


rule reference:
    input:
        trajectory_files("ours", "{task}", "long"),
        code=sources("bellman.cli.train_reference"),
    output:
        "results/reference/{task}/q_star.pt",
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
        " --out {output} > {log} 2>&1"
