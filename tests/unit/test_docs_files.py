"""Each study's docs page lists its files under "Files and tests": every module of the study's package
and every unit test of its folder is named there, and every path named there exists. Paths are written
from the project's root in backticks, `{a,b}` naming several files of one folder."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ("bellman", "agents", "offline")
PATH = re.compile(r"`([\w./{},-]+\.(?:py|smk|rst|yaml|md))`")


def expand(pattern: str) -> list[str]:
    """`a/{b,c}.py` -> a/b.py, a/c.py (any number of brace groups)."""
    pieces = re.split(r"\{([^{}]*)\}", pattern)
    choices = [[piece] if i % 2 == 0 else piece.split(",") for i, piece in enumerate(pieces)]
    return ["".join(parts) for parts in itertools.product(*choices)]


def listed(page: str) -> set[str]:
    """The paths named in a page's "Files and tests" section (up to the next section)."""
    text = (ROOT / "docs" / f"{page}.md").read_text()
    section = text.split("\n## Files and tests\n", 1)[1].split("\n## ", 1)[0]
    return {path for pattern in PATH.findall(section) if "/" in pattern for path in expand(pattern)}


@pytest.mark.parametrize("study", STUDIES)
def test_every_file_of_the_study_is_listed(study):
    named = listed(study)
    modules = {str(path.relative_to(ROOT)) for path in (ROOT / "src" / "rlstudy" / study).rglob("*.py")}
    tests = {str(path.relative_to(ROOT)) for path in (ROOT / "tests" / "unit" / study).glob("test_*.py")}
    assert sorted((modules | tests) - named) == []


@pytest.mark.parametrize("study", STUDIES)
def test_every_listed_file_exists(study):
    assert sorted(path for path in listed(study) if not (ROOT / path).is_file()) == []


def test_expand():
    assert expand("a/{b,c}/{d,e}.py") == ["a/b/d.py", "a/b/e.py", "a/c/d.py", "a/c/e.py"]
    assert expand("a/b.py") == ["a/b.py"]
