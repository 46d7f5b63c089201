# The confirmatory block's group-sequential design, look by look (src/rlstudy/core/looks.py): where it runs
# (LOOKS, set by the Snakefile: a lock with a design, the confirmatory block), every rule runs the seeds of
# the look in progress, this rule decides that look (results/looks/look<k>/: claims.csv, lists.csv) and the
# claims read the last look's decisions. `python -m rlstudy.runtime.launch` (make figures) runs the
# workflow again while a list continues. Elsewhere LOOKS is None: no look is made or read.
from rlstudy.core.looks import CLAIMS_FILE, LISTS_FILE, LOOKS_DIR, look_dir, locked_design, tables_read

LOOK_DESIGN = locked_design(Path(LOCK)) if LOOKS else {}
LOOK_TABLES = tables_read(LOOK_DESIGN, CLAIMS) if LOOKS else []
# The look this run makes (past the last one where the design has finished, or none runs: never asked for).
NEXT_LOOK = (LOOKS.current or LOOKS.made + 1) if LOOKS else 1
# The last look's files (the look this run makes, or the last made); none without a design.
LAST_LOOK = [look_dir(LOOKS.last)] if LOOKS else []


use rule step as look with:
    input:
        claims="claims.yaml",
        schema="workflow/schemas/claims.schema.yaml",
        lock=LOCK,
        tables=lambda w: [CLAIM_TABLES[name] for name in LOOK_TABLES],
        code=sources("claims.cli.decide_look"),
    output:
        claims=str(look_dir(NEXT_LOOK) / CLAIMS_FILE),
        lists=str(look_dir(NEXT_LOOK) / LISTS_FILE),
    log:
        f"logs/looks/look{NEXT_LOOK}.log",
    params:
        args=lambda w, input: options(
            claims=input.claims,
            schema=input.schema,
            lock=input.lock,
            look=NEXT_LOOK,
            looks_dir=str(LOOKS_DIR),
            table=[f"{name}={CLAIM_TABLES[name]}" for name in LOOK_TABLES],
        ),


rule looks:  # the design's looks up to the one in progress: snakemake --cores all looks
    input:
        [str(folder / LISTS_FILE) for folder in LAST_LOOK],
