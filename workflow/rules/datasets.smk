# Stage 1: SDE trajectories of each task's policy, a short one (the methods) and a long one (Q*);
# and, when config `authors_data` names a source, the authors' published trajectories and control Q*.


rule trajectory:
    input:
        code=sources("bellman.cli.make_trajectory"),
    output:
        trajectory_files("ours", "{task}", "{size}"),
    log:
        "logs/trajectory/{task}_{size}.log",
    benchmark:
        "logs/trajectory/{task}_{size}.benchmark.tsv"
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=lambda w: 4000 if w.size == "long" else 1000,
        runtime=10,
    params:
        steps=lambda w: config["trajectories"][w.size],
        dynamics=as_json(config["problem"]["dynamics"]),
        seed=config["seed"],
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.bellman.cli.make_trajectory --task {wildcards.task:q} --size {wildcards.size:q}"
        " --steps {params.steps:q} --dynamics {params.dynamics:q} --seed {params.seed:q}"
        " --out-dir data/trajectories/ours/{wildcards.task:q}/{wildcards.size:q} > {log:q} 2>&1"


rule authors_trajectory:
    input:
        authors_source_files(),
        code=sources("bellman.cli.import_authors_data"),
    output:
        trajectory_files("authors", "{task}"),
    log:
        "logs/trajectory/authors_{task}.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        source=config["authors_data"],
        digests=authors_source_digests,  # the contents, not the mtimes, of the inputs rerun it
        steps=config["trajectories"]["authors"],
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.bellman.cli.import_authors_data --task {wildcards.task:q} --source {params.source:q}"
        " --steps {params.steps:q} --trajectory-out data/trajectories/authors/{wildcards.task:q}/short > {log:q} 2>&1"


rule authors_reference:
    input:
        authors_source_files(),
        code=sources("bellman.cli.import_authors_data"),
    output:
        AUTHORS_REFERENCE,
    log:
        "logs/reference/authors_control.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        source=config["authors_data"],
        digests=authors_source_digests,  # the contents, not the mtimes, of the inputs rerun it
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.bellman.cli.import_authors_data --task control --source {params.source:q}"
        " --reference-out {output:q} > {log:q} 2>&1"
