"""The parts of docs/claims.md's generated block that state the error guarantees: each claim's p
Holm-adjusted within its family and over the study, the line stating both guarantees, and the
descriptions (claims no replicate seed moves) and the claims carried from an earlier protocol's
publication, each listed apart from this run's verdicts (report/cli/render_readme.py places them)."""

from __future__ import annotations

import pandas as pd

from rlstudy.claims.rules import CARRIED, DESCRIPTION, HOLDS
from rlstudy.core.markdown import code, text
from rlstudy.report.verdicts import MARK

ADJUSTED = ("family", "p", "p_adjusted", "reverse_p", "reverse_p_adjusted")
STUDY = ("p_study", "reverse_p_study", "study_verdict")


def has_role(claims: pd.DataFrame, role: str) -> pd.Series:
    """The rows of a role (none in a table from before the roles)."""
    return claims["role"] == role if "role" in claims.columns else pd.Series(False, index=claims.index)


def confirmatory(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims this run tested: neither descriptions nor carried."""
    return claims[~has_role(claims, DESCRIPTION) & ~has_role(claims, CARRIED)]


def descriptions(claims: pd.DataFrame) -> pd.DataFrame:
    return claims[has_role(claims, DESCRIPTION)]


def carried(claims: pd.DataFrame) -> pd.DataFrame:
    return claims[has_role(claims, CARRIED)]


def _source(carried_from: str) -> tuple[str, str]:
    """('protocol k', the run's commit) of a carried claim's `carried_from` (claims/rules.py writes it)."""
    protocol, _, commit = str(carried_from).partition(", commit ")
    return protocol, commit


def carried_count(claims: pd.DataFrame) -> str:
    """The README's note of the carried claims, by the protocol they come from."""
    rows = carried(claims)
    if rows.empty:
        return ""
    counts = rows["carried_from"].map(lambda source: _source(source)[0]).value_counts(sort=False)
    return "".join(f"; {count} carried from {protocol}" for protocol, count in counts.items())


def table_head(column: str, adjusted: bool, study: bool) -> list[str]:
    if not adjusted:
        return [f"| claim | statement | {column} | evidence |", "| --- | --- | --- | --- |"]
    what = "p, Holm-adjusted in its family (raw)" + ("; over the study: p and verdict" if study else "")
    return [f"| claim | statement | {column} | {what} | evidence |", "| --- | --- | --- | --- | --- |"]


def adjusted_p(row: dict, study: bool) -> str:
    """The claim's decisive p for each direction, Holm-adjusted within its family, with the raw one, and
    (study) Holm-adjusted over every confirmatory claim with the verdict it gives: what each verdict was
    decided on (a sub-test's [holds] in the evidence is at the raw level)."""
    if pd.isna(row["p"]):
        return f"none: a description of the runs made (family {code(row['family'])})"
    cell = (f"{row['p_adjusted']:.3g} ({row['p']:.3g}); reverse {row['reverse_p_adjusted']:.3g} "
            f"({row['reverse_p']:.3g}); family {code(row['family'])}")
    if study:  # in words, not as a verdict mark: compare_verdicts reads the family's verdict alone
        cell += (f"; study: p {row['p_study']:.3g}, reverse {row['reverse_p_study']:.3g}, "
                 f"{text(row['study_verdict'])} study-wide")
    return cell


def error_lines(claims: pd.DataFrame, level: float = 0.05) -> list[str]:
    """The two guarantees, with the counts they apply to (only for a table with the study's columns)."""
    if not set(STUDY) <= set(claims.columns):
        return []
    tested = confirmatory(claims)
    tested = tested[tested["p"].notna()]
    holds = int((tested["study_verdict"] == HOLDS).sum())
    lines = [f"Error control: within each family, the chance of any false holds (and of any false fails) is at most "
             f"{level:g} (Holm over the family's tested claims); over the whole study, at most {level:g} among all "
             f"{len(tested)} tested confirmatory claims (Holm over all of them): {holds} hold at the study level."]
    if not carried(claims).empty:
        lines[0] += (f" The {len(carried(claims))} claims carried from an earlier protocol keep the guarantee of the "
                     "protocol that decided them, within that protocol (docs/claims.md, 'Carried verdicts'); the "
                     "tested claims have this run's.")
    return lines


def description_lines(claims: pd.DataFrame) -> list[str]:
    """The descriptions apart: a table after the verdicts, outside their counts and both procedures."""
    described = descriptions(claims)
    if described.empty:
        return []
    lines = ["", f"Descriptions ({len(described)}: quantities no replicate seed moves, measured once; outside the "
             "confirmatory count and both Holm procedures):", "", "| claim | statement | as measured | evidence |",
             "| --- | --- | --- | --- |"]
    evidence = described["evidence"] if "evidence" in described.columns else pd.Series("", index=described.index)
    for row, proof in zip(described.to_dict("records"), evidence):
        lines.append(f"| {code(row['id'])} | {text(row['statement'])} | {MARK[row['verdict']]} | {text(proof)} |")
    return lines


def carried_lines(claims: pd.DataFrame) -> list[str]:
    """The carried claims apart, one table per publication they come from: each claim's carried verdict and
    what this run's data show (no verdict), outside the counts and both Holm procedures of this run."""
    lines = []
    rows = carried(claims)
    if rows.empty:
        return lines
    for source, group in rows.groupby("carried_from", sort=False):
        protocol, commit = _source(source)
        lines += ["", f"Carried from {protocol} ({len(group)}: the verdicts its publication gave, of the run at "
                  f"commit {code(commit)} (`docs/publications/`); not tested again, outside this run's counts and "
                  "both Holm procedures):", "", "| claim | statement | verdict (carried) | evidence |",
                  "| --- | --- | --- | --- |"]
        for row in group.to_dict("records"):
            lines.append(f"| {code(row['id'])} | {text(row['statement'])} | {MARK[row['verdict']]} | "
                         f"{text(row['evidence'])} |")
    return lines
