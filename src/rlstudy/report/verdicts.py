"""A verdict as every published page shows it: the README's and docs/claims.md's blocks
(report/cli/render_readme.py) and the HTML report's front page (report/front_page.py), so that they
never mark or count the same verdicts two ways."""

from __future__ import annotations

import pandas as pd

from rlstudy.claims.rules import FAILS, HOLDS, INCONCLUSIVE

VERDICTS = (HOLDS, FAILS, INCONCLUSIVE)
# The same markup in Markdown and reStructuredText; compare_verdicts reads it back from docs/claims.md.
MARK = {HOLDS: "holds", FAILS: "**fails**", INCONCLUSIVE: "*inconclusive*"}


def verdict_counts(claims: pd.DataFrame) -> str:
    """How many claims have each verdict, in VERDICTS' order: '2 holds, 1 fails, 0 inconclusive'."""
    tally = claims["verdict"].value_counts()
    return ", ".join(f"{int(tally.get(verdict, 0))} {verdict}" for verdict in VERDICTS)
