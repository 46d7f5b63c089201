# Stage 6: the HTML report's front page (make report): what the report is and every claim's verdict.
# workflow/report/workflow.rst includes the block this rule writes.
include: "report_common.smk"


# The master seed, the seed block and every setting's seeds, for the front page.
FRONT_PAGE_SEEDS = as_json(
    {
        "master": config["seed"],
        "block": config["seed_block"],
        "settings": {
            setting: {task: list(seeds_of(setting, task)) for task in config["tasks"]} for setting in SETTINGS
        },
    }
)


use rule step as front_page with:
    input:
        claims="results/claims.csv",
        claims_file="claims.yaml",
        schema="workflow/schemas/claims.schema.yaml",
        code=sources("report.cli.write_front_page"),
    output:
        report(
            "results/report/front_page.rst",
            caption="../report/front_page_block.rst",
            category="0. Claims and verdicts",
        ),
    log:
        "logs/report/front_page.log",
    params:
        # The figures' names, not their files: the block links them and reads none (a figure redrawn,
        # e.g. cost_seconds from remeasured wall times, changes nothing in it).
        args=lambda w, input, output: options(
            claims=input.claims,
            claims_file=input.claims_file,
            schema=input.schema,
            figures=report_figures(),
            scale=SCALE.describe(),
            seeds=FRONT_PAGE_SEEDS,
            datasets=DATASETS,
            out=output[0],
        ),
