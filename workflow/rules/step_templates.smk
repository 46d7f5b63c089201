# Rule templates of the agents' and offline stages: a derived rule (`use rule step as <name> with:`)
# names its inputs, outputs, log and the step's arguments; the command, conda, threads and the
# default resources are written here once. Every argument reaches the shell quoted ({params.args:q}).
# Each stage file includes this one (Snakemake reads a file included twice once).


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


def tensorboard_args(run):
    """tensorboard_arg as a list of arguments, for {params.args:q}."""
    return tensorboard_arg(run).split()


def figure_args():
    """A plotting step's --formats and --dpi (config `figures`)."""
    return ["--formats", *config["figures"]["formats"], "--dpi", config["figures"]["dpi"]]
