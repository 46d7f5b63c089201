"""The verdicts a claim can get, and the verdict a carried claim keeps from an earlier protocol's
publication: the words the rules decide (rules.py) and a publication holds (publication.py), apart from
the statistics that decide them, so that reading a publication (the Snakefile does, when it parses)
imports no statistics library."""

from __future__ import annotations

from dataclasses import dataclass

HOLDS, FAILS, INCONCLUSIVE = "holds", "fails", "inconclusive"


@dataclass(frozen=True)
class Carried:
    """The verdict a carried claim keeps and the publication it comes from (its protocol and the commit of
    the run that published it)."""

    verdict: str
    protocol: int
    commit: str

    @property
    def source(self) -> str:
        return f"protocol {self.protocol}'s publication (commit {self.commit[:7]})"
