# Stage 6: the HTML report's front page (make report): what the report is and every claim's verdict.
# workflow/report/workflow.rst includes the block this rule writes.
include: "report_common.smk"


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
        args=front_page_options,
