"""The seeds each claim's test needs for power 0.8 at its stated smallest effect of interest, computed
for the test actually used (claims/planning.py: the sign test's power exactly, Brunner-Munzel's by
simulation, the binomial share test's exactly), from claims.yaml alone: no result is read.

    python benchmarks/seed_plan.py                      # print the table (markdown)
    python benchmarks/seed_plan.py --out seed_plan.csv  # and write it as CSV

The counts are per test: pairs (paired), runs per group (unpaired), or runs (a share test). A claim's
tests must each reach their count (intersection-union), and Holm within its family asks for a smaller
p, so a family of m claims plans at level 0.05/m for its first claim: `--holm` plans every test at
level/m of its family (the conservative plan). Per-run tests (run_noise) and descriptions of the runs
made plan no seeds: each run is decided by its own evaluation episodes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from rlstudy.claims.loading import load_claims
from rlstudy.claims.planning import effect_words, kind_of, planned_seeds, power_at

ROOT = Path(__file__).resolve().parents[1]


def described(test: dict) -> bool:
    """A description of the runs made: a share of every run, with no run_noise (no p-value)."""
    return test["kind"] == "share" and test["min_share"] >= 1.0 and "run_noise" not in test


def plan(claims: dict, holm: bool) -> pd.DataFrame:
    defaults = claims["defaults"]
    planning = defaults["planning"]
    family_size = {}  # the claims Holm counts: those with a p-value (not only descriptions of the runs made)
    for claim in claims["claims"]:
        tested = any(not described({**defaults, **test}) for test in claim["tests"])
        family_size[claim["family"]] = family_size.get(claim["family"], 0) + tested
    rows = []
    for claim in claims["claims"]:
        for number, test in enumerate(claim["tests"], start=1):
            test = {**defaults, **test}
            kind = kind_of(test)
            level = test["level"] / max(1, family_size[claim["family"]]) if holm else test["level"]
            seeds = planned_seeds(test, planning, level)
            rows.append({"id": claim["id"], "family": claim["family"], "test": number,
                         "kind": kind or "no seeds to plan (a per-run test or a description of the runs made)",
                         "effect": effect_words(test, planning), "level": level,
                         "planned_seeds": seeds if kind else None,
                         **{f"power_at_{n}": (power_at(test, n, planning, level) if kind else None)
                            for n in planning["sizes"]}})
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    lines = ["| claim | family | test | kind | effect | level | seeds for power 0.8 |",
             "| --- | --- | ---: | --- | --- | ---: | ---: |"]
    for row in table.itertuples():
        seeds = "" if pd.isna(row.planned_seeds) else f"{int(row.planned_seeds)}"
        lines.append(f"| `{row.id}` | {row.family} | {row.test} | {row.kind} | {row.effect} | {row.level:.3g} "
                     f"| {seeds} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--claims", type=Path, default=ROOT / "claims.yaml")
    p.add_argument("--schema", type=Path, default=ROOT / "workflow/schemas/claims.schema.yaml")
    p.add_argument("--holm", action="store_true", help="plan each test at level / (its family's size)")
    p.add_argument("--out", type=Path, help="also write the table as CSV")
    args = p.parse_args()
    table = plan(load_claims(args.claims, args.schema), args.holm)
    print(markdown(table))
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
