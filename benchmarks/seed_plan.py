"""The seeds each claim's test needs for power 0.8 at its stated smallest effect of interest, computed
for the test actually used (claims/planning.py: the sign test's power exactly, Brunner-Munzel's by
simulation, the binomial share test's exactly), from claims.yaml alone: no result is read.

    python benchmarks/seed_plan.py                      # print the table (markdown)
    python benchmarks/seed_plan.py --out seed_plan.csv  # and write it as CSV
    python benchmarks/seed_plan.py --budget 300 --budget 450 --job-minutes seeds.control=2.9
                                                        # and what each budget funds (report/design.py)

The counts are per test: pairs (paired), runs per group (unpaired), or runs (a share test). A claim's
tests must each hold (intersection-union), so each of its k tests is planned for power 0.8^(1/k) (two
tests at 0.8 give the claim 0.64), and Holm asks for a smaller p, so each test is planned at Holm's
smallest level: level / m of its family's m tested claims (`--study`: level / M of the study's M).
The last table gives each seed list's planned maximum (claims/planning.planned_max_counts, what the
group-sequential design reads). Per-run tests (run_noise) and descriptions plan no seeds: a run is
decided by its own evaluation episodes, and the last table gives the fewest episodes a per-run claim
with a known bar needs at its planned level. With `--budget`, two more tables give what each budget
buys under the protocol's design (report/design.protocol_design, the config's looks and job_minutes, each
`--job-minutes LIST=MINUTES` replacing one): per claim, whether it is funded whole or the fewest seeds the
budget affords of a list it needs more of; per seed list, the maximum it is planned at.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from rlstudy.claims.loading import load_claims
from rlstudy.core.config import load_yaml
from rlstudy.core.seed_blocks import CONFIRMATORY_KEY
from rlstudy.report.design import protocol_design
from rlstudy.claims.planning import (
    claim_power,
    effect_words,
    kind_of,
    planned_levels,
    per_run_episodes,
    planned_max_counts,
    planned_seeds,
    power_at,
)

ROOT = Path(__file__).resolve().parents[1]


def plan(claims: dict, study: bool) -> pd.DataFrame:
    defaults = claims["defaults"]
    planning = defaults["planning"]

    levels = planned_levels(claims, study)
    rows = []
    for claim in claims["claims"]:
        tests = [{**defaults, **t} for t in claim["tests"]]
        each = claim_power(planning, sum(bool(kind_of(t)) for t in tests))
        for number, test in enumerate(tests, start=1):
            kind = kind_of(test)
            level = levels.get(claim["id"], test["level"])
            rows.append({"id": claim["id"], "family": claim["family"], "test": number,
                         "kind": kind or "no seeds to plan (a per-run test or a description)",
                         "effect": effect_words(test, planning), "level": level, "power": each["power"],
                         "planned_seeds": planned_seeds(test, each, level) if kind else None,
                         **{f"power_at_{n}": (power_at(test, n, planning, level) if kind else None)
                            for n in planning["sizes"]}})
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    lines = ["| claim | family | test | kind | effect | level | power per test | seeds |",
             "| --- | --- | ---: | --- | --- | ---: | ---: | ---: |"]
    for row in table.itertuples():
        seeds = "" if pd.isna(row.planned_seeds) else f"{int(row.planned_seeds)}"
        lines.append(f"| `{row.id}` | {row.family} | {row.test} | {row.kind} | {row.effect} | {row.level:.3g} "
                     f"| {row.power:.3f} | {seeds} |")
    return "\n".join(lines)


def job_minutes(text: str) -> tuple[str, float]:
    key, _, minutes = text.partition("=")
    try:
        return key, float(minutes)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--job-minutes {text!r}: expected LIST=MINUTES") from None


def budget_plans(claims: dict, config: dict, budgets: list[float], minutes: dict[str, float]) -> list[dict]:
    """The protocol's design at each budget, the config's job-minutes per seed updated by `minutes`."""
    block = config.get(CONFIRMATORY_KEY) or {}
    design = block.get("design") or {}
    design = {**design, "job_minutes": {**(design.get("job_minutes") or {}), **minutes}}
    return [protocol_design(claims, {**config, CONFIRMATORY_KEY: {
        **block, "design": {**design, "budget_job_minutes": budget}}}) for budget in budgets]


def shortest(design: dict, claim: str) -> tuple[int, int | None]:
    """(seeds afforded, seeds needed) of the list a claim not funded falls furthest short on."""
    pairs = [(design["lists"][key]["maximum"], plan["maximum"]) for plan in design["tests"] if plan["claim"] == claim
             for key in plan["lists"] if plan["maximum"] is None or design["lists"][key]["maximum"] < plan["maximum"]]
    return min(pairs, key=lambda pair: pair[0] / (pair[1] or math.inf))


def budget_markdown(designs: list[dict]) -> str:
    """Per claim and budget: funded (its order), or the fewest seeds afforded of a list it needs more of; per
    list and budget: its planned maximum (of the needed)."""
    head = " | ".join(f"{design['budget_job_minutes']:g} job-min" for design in designs)
    lines = [f"| claim | {head} |", "| --- |" + " --- |" * len(designs)]
    for claim in sorted({plan["claim"] for plan in designs[0]["tests"] if plan["lists"]}):
        cells = []
        for design in designs:
            if claim in design["funded"]:
                cells.append(f"funded ({design['funded'].index(claim) + 1})")
            else:
                afford, need = shortest(design, claim)
                cells.append(f"{afford} of {need or 'more than max_seeds'}")
        lines.append(f"| `{claim}` | " + " | ".join(cells) + " |")
    lines += ["", f"| seed list (job-min per seed) | needed | {head} |", "| --- | ---: |" + " ---: |" * len(designs)]
    for key, item in designs[0]["lists"].items():
        lines.append(f"| {key} ({item['job_minutes']:g}) | {item['needed']} | "
                     + " | ".join(str(design["lists"][key]["maximum"]) for design in designs) + " |")
    lines.append("| job-minutes planned | " + f"{designs[0]['job_minutes_at_maximum']:g} | "
                 + " | ".join(f"{design['job_minutes_planned']:g}" for design in designs) + " |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--claims", type=Path, default=ROOT / "claims.yaml")
    p.add_argument("--schema", type=Path, default=ROOT / "workflow/schemas/claims.schema.yaml")
    p.add_argument("--config", type=Path, default=ROOT / "config.yaml", help="the agents' bars (solved_return)")
    p.add_argument("--study", action="store_true", help="plan at Holm's smallest level over the study, not the family")
    p.add_argument("--out", type=Path, help="also write the table as CSV")
    p.add_argument("--budget", type=float, action="append", default=[],
                   help="also print what this budget (job-minutes) funds; repeat for several")
    p.add_argument("--job-minutes", type=job_minutes, action="append", default=[], metavar="LIST=MINUTES",
                   help="one seed of a list in job-minutes, replacing the config's (with --budget)")
    args = p.parse_args()
    claims = load_claims(args.claims, args.schema)
    table = plan(claims, args.study)
    print(markdown(table))
    print("\n| seed list | planned maximum |\n| --- | ---: |")
    for name, count in planned_max_counts(claims, args.study).items():
        print(f"| {name} | {count if count is not None else 'more than the plan allows'} |")
    config = load_yaml(args.config, "config file")
    bars = {agent: config[agent]["solved_return"] for agent in config if isinstance(config[agent], dict)
            and "solved_return" in config[agent]}
    print("\n| per-run claim | evaluation episodes it needs (every episode at the top of the range) |\n| --- | ---: |")
    for claim, episodes in per_run_episodes(claims, bars, args.study).items():
        print(f"| `{claim}` | {episodes} |")
    if args.budget:
        print("\nWhat each budget funds: a claim funded whole (in the order funded), or n of m: the fewest seeds the "
              "budget affords of a list its tests need m of.\n")
        print(budget_markdown(budget_plans(claims, config, args.budget, dict(args.job_minutes))))
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
