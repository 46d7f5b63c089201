# Stage 6: the HTML report's front page (make report): what the report is and every claim's verdict.
# workflow/report/workflow.rst includes the block this rule writes.
include: "report_common.smk"


rule front_page:
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
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE.describe(),
        seeds=as_json(
            {
                "master": config["seed"],
                "block": config["seed_block"],
                "settings": {
                    setting: {task: list(seeds_of(setting, task)) for task in config["tasks"]} for setting in SETTINGS
                },
            }
        ),
        datasets=DATASETS,
        # The figures' names, not their files: the block links them and reads none (a figure redrawn,
        # e.g. cost_seconds from remeasured wall times, changes nothing in it).
        figures=lambda w: report_figures(),
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.report.cli.write_front_page --claims {input.claims:q}"
        " --claims-file {input.claims_file:q} --schema {input.schema:q} --figures {params.figures:q}"
        " --scale {params.scale:q} --seeds {params.seeds:q} --datasets {params.datasets:q} --out {output:q} > {log:q} 2>&1"
