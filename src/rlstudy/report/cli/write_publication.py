"""Write a protocol's publication (claims/publication.py) from the manifest its confirmatory run published:
the protocol's number, the run's commit (the one its artefacts' records name), the protocol commit where
the manifest names one, and every claim's verdict (with its p-values where the manifest has them). The
manifest is read as data (report/manifest_schema.py); one of the exploratory block, or whose run's
commit is not a clean commit, is refused: only a confirmatory run's verdicts are carried.

    python -m rlstudy.report.cli.write_publication --protocol 1 --manifest docs/manifest.json \\
        --out docs/publications/protocol-1.json
"""

from __future__ import annotations

import json
import re
from collections import Counter

from rlstudy.claims.publication import COMMIT, FORMAT, publication_problems
from rlstudy.core.atomic_writes import write_artefact
from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.regular_files import shown
from rlstudy.core.seed_blocks import CONFIRMATORY
from rlstudy.report.manifest import run_commit
from rlstudy.report.manifest_schema import load_manifest


def publication(manifest: dict, protocol: int, where: str) -> dict:
    """The publication of a manifest's verdicts under protocol `protocol`."""
    if manifest["seed_block"]["block"] != CONFIRMATORY:
        raise InputError(f"{shown(where)}: a run of the {manifest['seed_block']['block']} block; only a confirmatory "
                         "run's verdicts are a protocol's publication")
    commit = run_commit(Counter(manifest["commits_of_artefacts"]))
    if not re.match(COMMIT, commit):
        raise InputError(f"{shown(where)}: the run's commit is {shown(commit)}, not a clean commit: its verdicts "
                         "cannot be traced to a protocol")
    verdicts = {claim: {"verdict": verdict} for claim, verdict in sorted(manifest["verdicts"].items())}
    record = {"format": FORMAT, "protocol": protocol, "commit": commit,
              "protocol_commit": manifest.get("protocol_commit"), "verdicts": verdicts,
              "about": f"the verdicts protocol {protocol}'s confirmatory run published, extracted from its manifest "
                       "by python -m rlstudy.report.cli.write_publication (claims/publication.py)"}
    found = publication_problems(record)
    if found:
        raise InputError(f"{shown(where)}: its verdicts are not a publication: {found[0]}")
    return record


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--manifest", default="docs/manifest.json", help="the manifest the protocol's run published")
    p.add_argument("--protocol", type=int, required=True, help="the protocol's number (1 for the first)")
    p.add_argument("--out", required=True, help="docs/publications/protocol-<k>.json")
    args = p.parse_args()
    record = publication(load_manifest(args.manifest), args.protocol, args.manifest)
    write_artefact(args.out, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode(), None)
    counts = Counter(entry["verdict"] for entry in record["verdicts"].values())
    print(f"{args.out}: protocol {args.protocol}'s publication, run commit {record['commit'][:12]}, "
          + ", ".join(f"{counts[v]} {v}" for v in sorted(counts)))


if __name__ == "__main__":
    run(main)
