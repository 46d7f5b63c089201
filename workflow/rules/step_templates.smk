# Rule templates of the agents' and offline stages: a derived rule (`use rule step as <name> with:`)
# names its inputs, outputs, log and the step's arguments; the command, conda, threads and the
# default resources are written here once. Every argument reaches the shell quoted ({params.args:q}).
# The Snakefile includes it after common.smk.


include: "step_arguments.smk"


rule step:
    params:
        step="rlstudy.<study>.cli.<step>",
        args=[],
    log:
        "logs/templates/step.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../../envs.yaml"
    shell:
        "python -m {params.step:q} {params.args:q} > {log:q} 2>&1"
