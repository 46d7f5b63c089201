"""Write protocol.lock: the sha256 of claims.yaml (and of each claim, and of what they share), of the
confirmatory seed plan config.yaml resolves, and of the analysis code (rlstudy.report.protocol,
ANALYSIS_CODE). Commit it before the confirmatory run (`make figures`): the commit that last changed it
is the protocol commit, and render_readme publishes a confirmatory run's verdicts only against it.

    make protocol        # then: git add protocol.lock && git commit -m 'protocol: ...'

--check compares the lock with this checkout instead (status 1 and what differs when it is stale)."""

from __future__ import annotations

import sys
from pathlib import Path

from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import replace_all
from rlstudy.report.protocol import LOCK, lock_text, make_lock, read_lock

ROOT = Path(__file__).resolve().parents[4]


def differences(lock: dict, current: dict) -> list[str]:
    """What of the checkout differs from a lock, one line each."""
    found = []
    for key, what in (("claims_shared_sha256", "the claims' shared settings (defaults)"),
                      ("seed_plan_sha256", "the confirmatory seed plan"),
                      ("analysis_code_sha256", "the analysis code")):
        if lock.get(key) != current[key]:
            found.append(what)
    for claim in sorted(set(lock["claims"]) | set(current["claims"])):
        if lock["claims"].get(claim) != current["claims"].get(claim):
            how = ("added" if claim not in lock["claims"] else "removed" if claim not in current["claims"]
                   else "changed")
            found.append(f"claim {claim!r} ({how})")
    return found


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--root", default=str(ROOT), help="the project's root (its analysis code is read there)")
    p.add_argument("--claims", default="claims.yaml")
    p.add_argument("--config", default="config.yaml", help="the paper-scale config whose confirmatory block is locked")
    p.add_argument("--schema", default="workflow/schemas/config.schema.yaml")
    p.add_argument("--out", default=LOCK)
    p.add_argument("--check", action="store_true", help="compare the lock with the checkout; write nothing")
    args = p.parse_args()
    root = Path(args.root)
    current = make_lock(root, Path(args.claims), Path(args.config), Path(args.schema))
    if args.check:
        stale = differences(read_lock(Path(args.out)), current)
        if stale:
            print(f"{args.out} differs from this checkout in: " + "; ".join(stale))
            sys.exit(1)
        print(f"{args.out} matches this checkout")
        return
    if current["analysis_code"] == {}:
        raise InputError(f"--root {root}: no analysis code found there (rlstudy.report.protocol.ANALYSIS_CODE)")
    replace_all({Path(args.out): lock_text(current).encode()})
    print(f"wrote {args.out}: {len(current['claims'])} claims, {len(current['seed_plan'])} seed lists, "
          f"{len(current['analysis_code'])} analysis files; commit it before the confirmatory run")


if __name__ == "__main__":
    run(main)
