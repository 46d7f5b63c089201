# Stage 5: every claim of claims.yaml with its verdict, computed from the result tables.


from rlstudy.claims.publication import publications_in

CLAIM_TABLES = {
    "summary": "results/summary.csv",
    "references": "results/reference/error_exact.csv",
    "sweep": "results/sweep/cbo_sweep.csv",
    "cost": "results/cost.csv",
    "agents": "results/agents/summary.csv",
    "offline": "results/offline/summary.csv",
    "budget": "results/budget/budget.csv",
    "seed_plan": SEED_PLAN,  # no claim reads it: its sha256 in claims.csv's record names the run's seeds (protocol.smk)
}
# The earlier protocols' publications, whose verdicts the claims marked `carried` keep (claims/publication.py).
PUBLICATIONS = publications_in(Path("."))


use rule step as claims with:
    input:
        claims="claims.yaml",
        schema="workflow/schemas/claims.schema.yaml",
        publications=PUBLICATIONS,
        tables=list(CLAIM_TABLES.values()),
        looks=[str(folder / CLAIMS_FILE) for folder in LAST_LOOK],  # the design's last look decides its claims (looks.smk)
        code=sources("claims.cli.evaluate_claims"),
    output:
        claims=report("results/claims.csv", caption="../report/claims.rst", category="0. Claims and verdicts"),
        seed_power="results/seed_power.csv",
    log:
        "logs/claims.log",
    params:
        args=claims_options,
