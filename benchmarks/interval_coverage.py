"""The coverage of every interval and the false-positive rate of every test the project prints, at the
seed counts the study uses (calibration.SEED_COUNTS), measured by simulation (src/rlstudy/core/calibration.py).

    python benchmarks/interval_coverage.py                          # print the table
    python benchmarks/interval_coverage.py --write docs/bellman.md  # and write it into the page's block

Seeded: the same command prints the same table. 20,000 repetitions per cell (standard error at most
0.0035, printed beside each estimate).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rlstudy.core.calibration import SEED_COUNTS, coverage_table

START = "<!-- coverage:start (written by python benchmarks/interval_coverage.py --write docs/bellman.md) -->"
END = "<!-- coverage:end -->"


def render(rows: list[dict], repetitions: int) -> str:
    lines = [START, f"Measured by `python benchmarks/interval_coverage.py` ({repetitions:,} simulated samples per "
             "cell, seeded; ± one standard error of the simulation):", "",
             "| interval or test | measured | law of a seed's value | " + " | ".join(f"n = {n}" for n in SEED_COUNTS) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in SEED_COUNTS) + " |"]
    cells: dict[tuple[str, str, str], dict[int, str]] = {}
    for row in rows:
        cells.setdefault((row["what"], row["measure"], row["law"]), {})[row["n"]] = row["estimate"]
    for (what, measure, law), by_n in cells.items():
        lines.append(f"| {what} | {measure} | {law} | " + " | ".join(by_n[n] for n in sorted(by_n)) + " |")
    return "\n".join([*lines, END])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repetitions", type=int, default=20_000)
    p.add_argument("--write", type=Path, help="a page with the coverage block to replace")
    args = p.parse_args()
    block = render(coverage_table(args.repetitions), args.repetitions)
    print(block)
    if args.write:
        text = args.write.read_text()
        if text.count(START) != 1 or text.count(END) != 1:
            raise SystemExit(f"{args.write}: expected one block between '{START}' and '{END}'")
        args.write.write_text(text[:text.index(START)] + block + text[text.index(END) + len(END):])


if __name__ == "__main__":
    main()
