"""The generated part of the HTML report's front page (workflow/report/workflow.rst includes it): what
the report is (its scale, the commit of its verdicts, its seeds, its datasets) and every claim of
results/claims.csv as a table (the statement, the verdict, the decisive test), each claim with links
to the figures behind it. reStructuredText: Snakemake renders the front page with docutils.

A claim's figures come from its tests (claims.yaml): the table a test reads and the dataset, task,
setting, agent, environment it selects name the figure drawn from those runs (FIGURES). Only figures
the report holds are linked: a link opens the figure's entry in the report (Snakemake's
app.showResultInfo), and an entry the report lacks would blank the page."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence

import pandas as pd

from rlstudy.claims.rules import HOLDS
from rlstudy.report.claims_page import carried_count, confirmatory, descriptions
from rlstudy.report.verdicts import MARK, verdict_counts
# claims.csv's evidence: each test's "[verdict] text", joined by " | " (claims/rules.evaluate).
_TEST_SEPARATOR = re.compile(r" \| (?=\[(?:holds|fails|inconclusive)\] )")
_TEST = re.compile(r"\[(holds|fails|inconclusive)\] (.*)", re.DOTALL)
_P_VALUE = re.compile(r": p = ([0-9.eE+-]+|nan|inf) \(reverse p")
# A report's figure per claims table, as a glob over its files: {dataset}, {task}, ... filled from the
# test's selection (where, and the groups it compares), "*" where the test leaves a key open.
FIGURES = {
    "summary": "figures/{dataset}/q_{task}_{setting}.*",
    "references": "figures/ours/reference_error.*",
    "sweep": "figures/ours/cbo_sweep.*",
    "cost": "figures/{dataset}/cost_evaluations.*",
    "budget": "figures/ours/budget_{task}.*",
    "agents": "figures/agents/{agent}_learning_curve.*",
    "offline": "figures/offline_{env}.*",
}
# Agents whose curve is drawn in another agent's figure (MPO's beside DDPG's).
AGENT_FIGURE = {"mpo": "mpo_vs_ddpg"}
GROUPS = ("lower", "higher", "numerator", "denominator")
# What a claim id and a figure's path may hold: both go into the page's markup and a link's script.
CLAIM_ID = re.compile(r"[a-z0-9-]+")
FIGURE_PATH = re.compile(r"[A-Za-z0-9_./-]+")
_RST_SPECIAL = re.compile(r"([\\`*_|<>\[\]:])")


def rst_inline(value) -> str:
    """A value as literal reStructuredText inside a line: its inline markup escaped, one line."""
    return _RST_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))


def rst_text(value) -> str:
    """A value as literal text in one reStructuredText table cell or list item: rst_inline, and its
    first character escaped too, so that no cell starts a list, an enumeration or a directive."""
    line = rst_inline(value)
    return f"\\{line}" if line and not line.startswith("\\") else line


def tests_of(evidence: str) -> list[tuple[str, str]]:
    """(verdict, evidence) of each test of a claims.csv row's evidence."""
    found = []
    for part in _TEST_SEPARATOR.split(str(evidence)):
        match = _TEST.fullmatch(part.strip())
        if match:
            found.append((match.group(1), match.group(2)))
    return found


def decisive_test(verdict: str, evidence: str) -> tuple[int, int, str]:
    """(its number from 1, the claim's number of tests, its evidence) of the test that decides the
    verdict: the first failing test of a claim that fails, the first undecided one of an
    inconclusive claim, and of a claim that holds (every test holds) the one nearest to not holding,
    the largest p-value (the first, without p-values)."""
    tests = tests_of(evidence)
    if not tests:
        return 0, 0, str(evidence)
    if verdict == HOLDS:
        def p_value(test):
            match = _P_VALUE.search(test[1])
            return float(match.group(1)) if match else -1.0
        index = max(range(len(tests)), key=lambda i: (p_value(tests[i]), -i))
    else:
        index = next((i for i, (v, _) in enumerate(tests) if v == verdict), 0)
    return index + 1, len(tests), tests[index][1]


def _values(test: dict, key: str) -> list[str]:
    """The values a test selects for key: its `where`'s, else its compared groups', else none (any)."""
    if key in test.get("where", {}):
        return [str(test["where"][key])]
    return list(dict.fromkeys(str(test[g][key]) for g in GROUPS if key in test.get(g, {})))


def figure_patterns(test: dict) -> list[str]:
    """The globs of the figures drawn from the runs one test reads."""
    pattern = FIGURES.get(test["table"])
    if pattern is None:
        return []
    keys = re.findall(r"{(\w+)}", pattern)
    patterns = [pattern]
    for key in keys:
        values = _values(test, key) or ["*"]
        if key == "agent":
            values = [AGENT_FIGURE.get(v, v) for v in values]
        patterns = [p.replace(f"{{{key}}}", v) for p in patterns for v in values]
    return patterns


def figures_behind(claim: dict, available: Sequence[str]) -> list[str]:
    """The figures of `available` (the report's, in their order) drawn from the runs a claim's tests read."""
    patterns = [p for test in claim["tests"] for p in figure_patterns(test)]
    return [path for path in available if any(fnmatch.fnmatchcase(path, p) for p in patterns)]


def _figure_link(path: str) -> str:
    name = path.removeprefix("figures/").rsplit(".", 1)[0]
    # Snakemake's report keys each result by its path; the javascript: link opens its entry.
    return f"`{name} <javascript:app.showResultInfo('{path}')>`__"


def claims_table(claims: pd.DataFrame, declared: Iterable[dict], available: Sequence[str]) -> list[str]:
    """The claims as a list-table: the claim (id, statement, its figures), the verdict, the decisive test."""
    tests = {claim["id"]: claim for claim in declared}
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 45 12 43", "   :class: claims", "",
             "   * - claim", "     - verdict", "     - decisive test"]
    for row in claims.itertuples():
        figures = figures_behind(tests[row.id], available) if row.id in tests else []
        claim = f"**{row.id}**: {rst_text(row.statement)}"
        if figures:
            claim += " Figures: " + ", ".join(_figure_link(path) for path in figures) + "."
        number, total, evidence = decisive_test(row.verdict, row.evidence)
        which = f"test {number} of {total}: " if total > 1 else ""
        lines += [f"   * - {claim}", f"     - {MARK.get(row.verdict, rst_text(row.verdict))}",
                  f"     - {rst_text(which + evidence)}"]
    return lines


def _descriptions_note(claims: pd.DataFrame) -> str:
    """The descriptions (claims no replicate seed moves) are in the table, not in the counts."""
    count = len(descriptions(claims))
    described = f"; and {count} descriptions (no replicate seed moves them), listed below, not counted" if count else ""
    return carried_count(claims) + described


def render(claims: pd.DataFrame, declared: Iterable[dict], available: Sequence[str], *, scale: str, commit: str,
           seeds: str, datasets: str) -> str:
    """The front page's generated block (reStructuredText)."""
    lines = [
        ".. The report's front page, generated by rule front_page (src/rlstudy/report/front_page.py).", "",
        f"**This report: {rst_inline(scale)}.**", "",
        f"- Commit of the verdicts: {rst_inline(commit)} (results/claims.csv.provenance.json).",
        f"- Seeds: {rst_inline(seeds)}.",
        f"- Data: {rst_inline(datasets)}.", "",
        "Claims and verdicts", "-------------------", "",
        f"{len(confirmatory(claims))} claims of the source notebooks and of this study (claims.yaml): "
        f"{verdict_counts(confirmatory(claims))}{_descriptions_note(claims)}. A "
        "claim holds when every test holds, fails when one fails; the decisive test is the one that decides "
        "its verdict (for a claim that holds, the test with the largest p-value). Every test's evidence and "
        "seeds: results/claims.csv (category 0).", "",
        *claims_table(claims, declared, available), ""]
    return "\n".join(lines)


def seed_list(seeds: Sequence[int]) -> str:
    """Seeds as runs of consecutive numbers: [0, 1, 2, 5] -> '0-2, 5'."""
    runs: list[list[int]] = []
    for seed in seeds:
        if runs and seed == runs[-1][-1] + 1:
            runs[-1].append(seed)
        else:
            runs.append([seed])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)) for run in runs) or "none"


def seeds_note(master: int, settings: dict[str, dict[str, Sequence[int]]], block: str | None = None) -> str:
    """The seed block in words: its name (config seed_block), the master seed every stream derives from,
    and each setting's replicate seeds (setting -> task -> seeds; one list where every task has the same)."""
    def of(by_task: dict[str, Sequence[int]]) -> str:
        lists = {seed_list(seeds) for seeds in by_task.values()}
        if len(lists) == 1:
            return lists.pop()
        return ", ".join(f"{task} {seed_list(seeds)}" for task, seeds in by_task.items())
    runs = "; ".join(f"{setting} {of(by_task)}" for setting, by_task in settings.items())
    named = {"confirmatory": "the confirmatory block (fresh seeds, run after the protocol commit): ",
             "exploratory": "the exploratory block (the seeds the study was developed and its claims written on): "}
    return (f"{named.get(block, '')}master seed {master} (every random stream derives from it and a name); "
            f"replicate seeds: {runs}")


def datasets_note(datasets: Sequence[str]) -> str:
    if "authors" in datasets:
        return ("our trajectories, generated from the master seed, and the authors' published trajectories "
                "(config authors_data; every run repeated on both)")
    return ("our trajectories only, generated from the master seed (config authors_data: none; the authors' "
            "published data is not in this report)")
