# Rule templates: a rule derives from one with `use rule <template> as <name> with:`, giving only what is
# its own: its inputs (code=sources(step) among them, which names the step), outputs, log, what it needs
# beyond the template's resources, and params `args`: the step's own options, options(name=value, ...)
# (common.smk), each word quoted for the shell. The rest is written here once: the threads, resources,
# conda environment and command line, and the params every job has (Snakemake keeps a template's params
# a rule does not give: `step`, the module the job runs, taken from its code input by step_of).
#
# conda stays a directive of each template: Snakemake's workflow-level `conda:` injects an environment
# into Snakemake itself, not into the jobs, and `snakemake --lint` asks for one per rule.
ENV = "../../envs.yaml"


# The template of every figure rule; its output is figure_output(...). Its params add the figure formats
# and resolution (config `figures`) and the options that say where the step writes: by default
# --out-prefix, the rule's first output without its extension; a step that writes several figures gives
# its own `outputs`. The template's own output matches no file the workflow asks for.
rule figure_template:
    output:
        "figures/.template/{name}.never",
    log:
        "logs/figures/.template/{name}.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        step=step_of,
        formats=config["figures"]["formats"],
        dpi=config["figures"]["dpi"],
        outputs=lambda wildcards, output: options(out_prefix=str(Path(output[0]).with_suffix(""))),
        args=[],
    shell:
        "python -m rlstudy.runtime.warmstart {params.step:q} {params.args:q} {params.outputs:q}"
        " --formats {params.formats:q} --dpi {params.dpi:q} > {log:q} 2>&1"


# The template of every other step, of every study.
rule step:
    log:
        "logs/templates/step.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        step=step_of,
        args=[],
    shell:
        "python -m rlstudy.runtime.warmstart {params.step:q} {params.args:q} > {log:q} 2>&1"
