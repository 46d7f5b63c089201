"""Write the manifest of a run (report/manifest.py): every artefact's sha256, size and kind, the tables the
claims read, the verdicts, the run's commit, seeds, scale and platform. `make readme` writes it as
docs/manifest.json; `make verify` (rlstudy.report.cli.verify) rebuilds part of the run and compares.

    python -m rlstudy.report.cli.write_manifest --scale paper --out docs/manifest.json
"""

from __future__ import annotations

import shlex
from pathlib import Path

from rlstudy.core.cli import parser, run
from rlstudy.core.atomic_writes import write_artefact
from rlstudy.report.manifest import dumps, manifest


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--project", default=".", help="the checkout whose data/, results/ and figures/ are listed")
    p.add_argument("--scale", required=True, choices=["paper", "smoke"],
                   help="the profile the run was made with: verify rebuilds with the same")
    p.add_argument("--snakemake-args", default="",
                   help="the run's further Snakemake options (e.g. --config authors_data=...), recorded for the "
                        "reader: verify shows them, never runs them")
    p.add_argument("--out", default="docs/manifest.json", help="where the manifest goes")
    args = p.parse_args()
    record = manifest(Path(args.project), args.scale, shlex.split(args.snakemake_args))
    write_artefact(args.out, dumps(record).encode(), None)
    counts = record["counts"]
    print(f"{args.out}: {counts['artefacts']} artefacts ({counts['measured']} measured, {counts['bytes']} bytes), "
          f"{counts['provenance_records']} provenance records, {len(record['verdicts'])} verdicts; "
          f"the run's commit {record['commit']}")


if __name__ == "__main__":
    run(main)
