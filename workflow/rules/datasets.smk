# Stage 1: SDE trajectories of each task's policy, a short one (the methods) and a long one (Q*).


rule trajectory:
    input:
        script=cli("make_trajectory"),
    output:
        trajectory_files("{task}", "{size}"),
    params:
        steps=lambda w: config["trajectories"][w.size],
        dynamics=as_json(config["dynamics"]),
        seed=config["seed"],
    log:
        "logs/trajectory/{task}_{size}.log",
    benchmark:
        "logs/trajectory/{task}_{size}.benchmark.tsv"
    threads: 1
    resources:
        mem_mb=lambda w: 4000 if w.size == "long" else 1000,
        runtime=10,
    conda:
        "../../envs.yaml"
    shell:
        "python -m rlstudy.cli.make_trajectory --task {wildcards.task} --size {wildcards.size}"
        " --steps {params.steps} --dynamics '{params.dynamics}' --seed {params.seed}"
        " --out-dir data/trajectories/{wildcards.task}/{wildcards.size} > {log} 2>&1"
