"""The claims page states both error guarantees (per family, over the study) and lists the descriptions
apart from the confirmatory verdicts and their counts."""

import pandas as pd

from rlstudy.report.verdict_comparison import PAGE_ROW
from rlstudy.report.cli.render_readme import render, render_page


def table():
    nan = float("nan")
    return pd.DataFrame({"id": ["a", "b", "ref"], "statement": ["s", "t", "r"],
                         "verdict": ["holds", "holds", "fails"], "study_verdict": ["holds", "inconclusive", "fails"],
                         "role": ["confirmatory", "confirmatory", "description"], "family": ["f", "g", "refs"],
                         "p": [0.001, 0.03, nan], "p_adjusted": [0.002, 0.03, nan], "reverse_p": [1.0, 1.0, nan],
                         "reverse_p_adjusted": [1.0, 1.0, nan], "p_study": [0.002, 0.06, nan],
                         "reverse_p_study": [1.0, 1.0, nan], "evidence": ["e1", "e2", "e3"]})


def test_the_page_states_both_guarantees_and_lists_descriptions_apart():
    page = render_page(table(), "c", problem=None)
    assert "2 holds, 0 fails, 0 inconclusive" in page  # the description is not counted
    assert "over the whole study, at most 0.05 among all 2 tested confirmatory claims" in page
    assert "1 hold at the study level" in page
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert rows[1].startswith("| `b` | t | holds | 0.03 (0.03)") and "study: p 0.06" in rows[1]
    assert "inconclusive study-wide" in rows[1]
    assert page.index("Descriptions (1") < page.index("| `ref` |")
    # compare_verdicts still reads the family's verdict, not the study's words
    assert PAGE_ROW.match(rows[1]).group("mark") == "holds"


def test_the_readme_counts_confirmatory_claims_and_names_the_descriptions():
    block = render(table(), "c")
    assert "2 claims, 2 holds, 0 fails, 0 inconclusive; 1 descriptions apart" in block
    assert "`ref`" not in block


def with_carried():
    """table() and a claim carried from protocol 1 (claims/rules.py writes its row so)."""
    carried = pd.DataFrame({"id": ["old"], "statement": ["o"], "verdict": ["holds"], "study_verdict": ["holds"],
                            "role": ["carried"], "family": ["f"], "p": [0.2], "p_adjusted": [0.2], "reverse_p": [1.0],
                            "reverse_p_adjusted": [1.0], "p_study": [0.2], "reverse_p_study": [1.0],
                            "evidence": ["[carried from protocol 1's publication (commit 2a123da)] this run's data"],
                            "carried_from": [f"protocol 1, commit {'2a123da' + '0' * 33}"]})
    return pd.concat([table().assign(carried_from=""), carried], ignore_index=True)


def test_carried_claims_are_listed_apart_with_their_verdict_and_the_publications_commit():
    page = render_page(with_carried(), "c", problem=None)
    assert "2 holds, 0 fails, 0 inconclusive" in page  # this run's verdicts: the carried claim is not counted
    assert "among all 2 tested confirmatory claims" in page  # nor in the study's Holm
    assert "The 1 claims carried from an earlier protocol keep the guarantee of the protocol that decided them" in page
    table_start = page.index("Carried from protocol 1 (1:")
    assert f"`{'2a123da' + '0' * 33}`" in page[table_start:]
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert rows[2].startswith("| `old` | o | holds | \\[carried from protocol 1") and page.index("| `old` |") > table_start
    assert table_start < page.index("Descriptions (1")  # carried, then descriptions, each apart
    block = render(with_carried(), "c")
    assert "2 claims, 2 holds, 0 fails, 0 inconclusive; 1 carried from protocol 1; 1 descriptions apart" in block
    assert "`old`" not in block
