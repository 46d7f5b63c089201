# Rule templates: a rule derives from one with `use rule <template> as <name> with:`, giving only
# what is its own; the rest (threads, resources, conda, the shell command) is written here once.


# The template of every figure rule: `use rule figure_template as <name> with:` and give its input
# (code=sources(step) included), output (figure_output), log and params (**FIGURE, step, args: the
# step's own options, each quoted for the shell). Its own output matches no file the workflow asks for.
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
        **FIGURE,
        step="",
        args=[],
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.{params.step:q} {params.args:q} --formats {params.formats:q} --dpi {params.dpi:q}"
        " --out-prefix {params.prefix:q} > {log:q} 2>&1"


# The template of every other step, of every study: `use rule step as <name> with:` and give its inputs,
# outputs, log and params (step: the module to run, args: its options as a list, each quoted for the shell;
# params other than these two only rerun the rule when they change).
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
        step="rlstudy.<study>.cli.<step>",
        args=[],
    shell:
        "python -m rlstudy.runtime.warmstart {params.step:q} {params.args:q} > {log:q} 2>&1"
