"""The README stays a short front door, and every relative link of it and of docs/ resolves, its
anchor included."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) < 200


def test_every_relative_link_resolves():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a web address or an anchor on the same page
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a Markdown page's headings: lower case, punctuation dropped, spaces as '-'."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_every_anchor_names_a_heading():
    """README.md linked `agents.md#results-as-measured` long after that heading was renamed."""
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target) or "#" not in target:
                continue
            path, anchor = target.split("#", 1)
            linked = (page.parent / path).resolve() if path else page
            if linked.suffix == ".md" and linked.exists() and anchor not in anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def test_every_test_file_the_pages_name_exists():
    """The pages name the tests that check each claim: a moved or renamed test file must be renamed there."""
    named = {(page.relative_to(ROOT), path) for page in PAGES
             for path in re.findall(r"tests/[A-Za-z0-9_/]*\.py", page.read_text())}
    assert sorted(f"{page}: {path}" for page, path in named if not (ROOT / path).exists()) == []


def test_test_files_have_unique_names():
    """pytest imports test modules by their file name (no packages): two files of one name in two
    folders stop the whole collection."""
    names = [path.name for path in (ROOT / "tests").rglob("test_*.py")]
    assert sorted({name for name in names if names.count(name) > 1}) == []
