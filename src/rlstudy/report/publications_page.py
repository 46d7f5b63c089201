"""The claims page's block of the previous publications (docs/claims.md, 'Previous publications'): for
each protocol whose publication the checkout holds (docs/publications/protocol-<k>.json, written from its
manifest by report.cli.write_publication, read back as validated data by claims/publication.py), its
counts of verdicts and, per claim, its verdict beside this run's and whether it moved. A publication of
the run being rendered is not a previous one and is left out. Every verdict is read, none typed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rlstudy.claims.publication import load_publications, publications_in
from rlstudy.claims.rules import FAILS, HOLDS, INCONCLUSIVE
from rlstudy.core.markdown import code, markers, text

START, END = markers("previous-publications")
NOT_IN_RUN = "not in this run"
APART = "no verdict (changed or added after the protocol commit)"


def _counts(verdicts: dict[str, dict]) -> str:
    found = [item["verdict"] for item in verdicts.values()]
    return ", ".join(f"{found.count(verdict)} {verdict}" for verdict in (HOLDS, FAILS, INCONCLUSIVE))


def render_previous(root: Path, claims: pd.DataFrame, commit: str, confirmatory: bool, apart=()) -> str:
    """The block (the module's docstring); `claims`: this run's results/claims.csv (id, verdict), made at
    `commit`; `confirmatory`: whether its verdicts are published (else its outcomes are exploratory);
    `apart`: the claims the protocol sets apart, whose verdict is not published."""
    publications, where = load_publications([str(root / path) for path in publications_in(root)])
    previous = {k: publication for k, publication in sorted(publications.items()) if publication["commit"] != commit}
    if not previous:
        return "\n".join([START, "No previous publication: this checkout holds none but this run's own.", END])
    current = {claim: APART if claim in set(apart) else verdict
               for claim, verdict in zip(claims["id"], claims["verdict"])}
    column = "this run" if confirmatory else "this run (exploratory: no verdict)"
    lines = [START]
    for protocol, publication in previous.items():
        protocol_commit = publication["protocol_commit"] or "not recorded in its manifest"
        lines += [f"Protocol {protocol}'s confirmatory run (commit {text(publication['commit'])}; protocol commit "
                  f"{text(protocol_commit)}), read from `{Path(where[protocol]).relative_to(root).as_posix()}`: "
                  f"{_counts(publication['verdicts'])}.", ""]
    ids = list(dict.fromkeys([claim for p in previous.values() for claim in p["verdicts"]] + list(current)))
    header = " | ".join(f"protocol {protocol}" for protocol in previous)
    lines += [f"| claim | {header} | {column} | moved since the last publication |",
              "| --- |" + " --- |" * (len(previous) + 2)]
    last = previous[max(previous)]["verdicts"]
    for claim in ids:
        cells = [previous[protocol]["verdicts"].get(claim, {}).get("verdict", "not published")
                 for protocol in previous]
        now = current.get(claim, NOT_IN_RUN)
        before = last.get(claim, {}).get("verdict")
        moved = "" if before is None or now in (NOT_IN_RUN, APART) else ("**moved**" if now != before else "no")
        lines.append(f"| {code(claim)} | " + " | ".join(text(cell) for cell in cells) + f" | {text(now)} | {moved} |")
    return "\n".join([*lines, END])
