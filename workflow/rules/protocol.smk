# The run's seed plan: the block of replicate seeds the Snakefile resolved (config seed_block) and every
# list it gave (core/seed_blocks.py). The claims rule reads it, so that results/claims.csv's record names
# the seeds its verdicts rest on; render_readme compares them with protocol.lock (report/protocol.py).
from rlstudy.core.seed_blocks import EXPLORATORY, seed_lists

SEED_PLAN = "results/seed_plan.csv"


use rule step as seed_plan with:
    input:
        code=sources("report.cli.record_seed_plan"),
    output:
        SEED_PLAN,
    log:
        "logs/seed_plan.log",
    resources:
        mem_mb=500,
        runtime=5,
    params:
        args=lambda w, output: options(
            block=config.get("seed_block", EXPLORATORY), plan=as_json(seed_lists(config)), out=output[0]
        ),
