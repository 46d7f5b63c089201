# The run's seed plan: the block of replicate seeds the Snakefile resolved (config seed_block) and every
# list it gave (core/seed_blocks.py). The claims rule reads it, so that results/claims.csv's record names
# the seeds its verdicts rest on; render_readme compares them with protocol.lock (report/protocol.py).
from rlstudy.core.seed_blocks import EXPLORATORY, seed_lists

SEED_PLAN = "results/seed_plan.csv"


rule seed_plan:
    input:
        code=sources("report.cli.record_seed_plan"),
    output:
        SEED_PLAN,
    log:
        "logs/seed_plan.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        block=config.get("seed_block", EXPLORATORY),
        plan=as_json(seed_lists(config)),
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.report.cli.record_seed_plan --block {params.block:q}"
        " --plan {params.plan:q} --out {output:q} > {log:q} 2>&1"
