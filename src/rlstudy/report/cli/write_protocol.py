"""Write protocol.lock (rlstudy.report.lock says what it holds): the claims, the config values they
read, the verdict step's code, the group-sequential design, and the confirmatory seeds derived from the
digest of all of them; refused where those seeds are spent (spent_blocks.yaml). Commit it before the
confirmatory run (`make figures`): the commit that last changed it is the protocol commit, and
render_readme publishes a confirmatory run's verdicts only against it.

    make protocol        # then: git add protocol.lock && git commit -m 'protocol: ...'

--check compares the lock with this checkout instead (status 1 and what differs when it is stale)."""

from __future__ import annotations

import sys
from pathlib import Path

from rlstudy.core.cli import parser, run
from rlstudy.core.atomic_writes import replace_all
from rlstudy.report.design import protocol_design
from rlstudy.report.lock import LOCK, SPENT, make_lock
from rlstudy.report.protocol import lock_text, read_lock

ROOT = Path(__file__).resolve().parents[4]


def differences(lock: dict, current: dict) -> list[str]:
    """What of the checkout differs from a lock, one line each."""
    found = []
    for key, what in (("claims_shared_sha256", "the claims' shared settings (defaults)"),
                      ("seed_plan_sha256", "the confirmatory seed plan"),
                      ("design", "the design")):
        if lock.get(key) != current[key]:
            found.append(what)
    for part, what in (("config_values", "config key"), ("analysis_code", "analysis file")):
        locked, now = lock.get(part) or {}, current[part]
        found += [f"{what} {key}" for key in sorted(set(locked) | set(now)) if locked.get(key) != now.get(key)]
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
    p.add_argument("--spent", default=SPENT, help="the confirmatory blocks already run (refused)")
    p.add_argument("--no-design", action="store_true", help="lock no group-sequential design (a lock for tests)")
    p.add_argument("--out", default=LOCK)
    p.add_argument("--check", action="store_true", help="compare the lock with the checkout; write nothing")
    args = p.parse_args()
    root = Path(args.root)
    current = make_lock(root, Path(args.claims), Path(args.config), Path(args.schema), Path(args.spent),
                        None if args.no_design else protocol_design, refuse_spent=not args.check)
    if args.check:
        stale = differences(read_lock(Path(args.out)), current)
        if stale:
            print(f"{args.out} differs from this checkout in: " + "; ".join(stale), file=sys.stderr)
            sys.exit(1)
        print(f"{args.out} matches this checkout")
        return
    replace_all({Path(args.out): lock_text(current).encode()})
    print(f"wrote {args.out}: {len(current['claims'])} claims, {len(current['seed_plan'])} seed lists, "
          f"{len(current['analysis_code'])} analysis files, {len(current['config_values'])} config values, "
          f"seeds from {current['seed_start']}; commit it before the confirmatory run")


if __name__ == "__main__":
    run(main)
