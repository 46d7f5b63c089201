# Stage 5: every claim of claims.yaml with its verdict, computed from the result tables.


CLAIM_TABLES = {
    "summary": "results/summary.csv",
    "references": "results/reference/error_exact.csv",
    "sweep": "results/sweep/cbo_sweep.csv",
    "cost": "results/cost.csv",
    "agents": "results/agents/summary.csv",
    "offline": "results/offline/summary.csv",
    "budget": "results/budget/budget.csv",
}


rule claims:
    input:
        claims="claims.yaml",
        schema="workflow/schemas/claims.schema.yaml",
        tables=list(CLAIM_TABLES.values()),
        code=sources("claims.cli.evaluate_claims"),
    output:
        claims=report("results/claims.csv", caption="../report/claims.rst", category="0. Claims and verdicts"),
        seed_power="results/seed_power.csv",
    log:
        "logs/claims.log",
    conda:
        ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        tables=[f"{name}={path}" for name, path in CLAIM_TABLES.items()],
    shell:
        "python -m rlstudy.runtime.warmstart rlstudy.claims.cli.evaluate_claims --claims {input.claims:q} --schema {input.schema:q}"
        " --table {params.tables:q} --out {output.claims:q} --seed-power {output.seed_power:q} > {log:q} 2>&1"
