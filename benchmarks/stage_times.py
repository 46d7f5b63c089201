"""Per-stage wall times of the last workflow run, from Snakemake's benchmark files under logs/.

    python benchmarks/stage_times.py [logs]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "logs")
    rows = []
    for tsv in sorted(root.rglob("*.benchmark.tsv")):
        stage = tsv.relative_to(root).parts[0]
        name = str(tsv.relative_to(root)).removesuffix(".benchmark.tsv")
        frame = pd.read_csv(tsv, sep="\t")
        rows.append({"stage": stage, "job": name, "seconds": float(frame["s"].iloc[-1]),
                     "max_rss_mb": float(frame["max_rss"].iloc[-1])})
    if not rows:
        sys.exit(f"no benchmark files under {root}: run the workflow first")
    jobs = pd.DataFrame(rows)
    print(jobs.groupby("stage")["seconds"].agg(jobs="count", total_s="sum", longest_s="max").round(1).to_string())
    print(f"\nall jobs: {jobs['seconds'].sum() / 60:.1f} core-minutes (1 thread each)")
    print("\nlongest jobs:")
    print(jobs.sort_values("seconds", ascending=False).head(8).round(1).to_string(index=False))


if __name__ == "__main__":
    main()
