# Rule templates: a rule derives from one with `use rule <template> as <name> with:`, giving only
# what is its own; the rest (threads, resources, conda, the shell command) is written here once.


# The template of every figure rule: `use rule figure_template as <name> with:` and give its input
# (code=sources(step), which names the step), output (figure_output), log and params (**figure(), args:
# the step's own options, each quoted for the shell). Its own output matches no file the workflow asks for.
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
        **figure(),
        args=[],
    shell:
        "python -m rlstudy.runtime.warmstart {params.step:q} {params.args:q} {params.outputs:q}"
        " --formats {params.formats:q} --dpi {params.dpi:q} > {log:q} 2>&1"


# The template of every other step, of every study: `use rule step as <name> with:` and give its inputs
# (code=sources(step), which names the step), outputs, log and params (**STEP, args: its options as a
# list, each quoted for the shell; params other than these only rerun the rule when they change).
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
        **STEP,
        args=[],
    shell:
        "python -m rlstudy.runtime.warmstart {params.step:q} {params.args:q} > {log:q} 2>&1"
