# Stage 1: SDE trajectories of each task's policy, a short one (the methods) and a long one (Q*);
# and, when config `authors_data` names a source, the authors' published trajectories and control Q*.


use rule step as trajectory with:
    input:
        code=sources("bellman.cli.make_trajectory"),
    output:
        trajectory_files("ours", "{task}", "{size}"),
    log:
        "logs/trajectory/{task}_{size}.log",
    benchmark:
        "logs/trajectory/{task}_{size}.benchmark.tsv"
    resources:
        mem_mb=lambda w: 4000 if w.size == "long" else 1000,
        runtime=10,
    params:
        args=trajectory_options,


use rule step as authors_trajectory with:
    input:
        authors_source_files(),
        code=sources("bellman.cli.import_authors_data"),
    output:
        trajectory_files("authors", "{task}"),
    log:
        "logs/trajectory/authors_{task}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        digests=authors_source_digests,  # the contents, not the mtimes, of the inputs rerun it
        args=authors_trajectory_options,


use rule step as authors_reference with:
    input:
        authors_source_files(),
        code=sources("bellman.cli.import_authors_data"),
    output:
        AUTHORS_REFERENCE,
    log:
        "logs/reference/authors_control.log",
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        digests=authors_source_digests,  # the contents, not the mtimes, of the inputs rerun it
        args=authors_reference_options,
