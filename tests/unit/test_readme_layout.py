"""The README's layout names every file a newcomer looks for: every rules file, and every module of the
parts that have no page of their own (the studies' pages list theirs: tests/unit/test_docs_files.py). A
module is named by its stem, in the block of its part."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARTS = ("claims", "report", "runtime", "core", "plotting")


def layout() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("\n## Layout\n", 1)[1].split("```", 2)[1]


def block(name: str, folder: str = "src/rlstudy") -> str:
    """The lines of the layout's entry `name/` under `folder/`, up to the next entry."""
    assert f"\n{folder}/\n" in layout(), f"the README's layout has no line {folder}/"
    within = layout().split(f"\n{folder}/\n", 1)[1]
    found = re.search(rf"^  {re.escape(name)}/ .*?(?=^  \S|^\S)", within, re.MULTILINE | re.DOTALL)
    assert found, f"the README's layout has no entry {name}/ under {folder}/"
    return found.group(0)


def named(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))


@pytest.mark.parametrize("part", PARTS)
def test_every_module_of_a_part_without_a_page_is_named(part):
    words = named(block(part))
    modules = sorted(path for path in (ROOT / "src" / "rlstudy" / part).rglob("*.py")
                     if path.stem not in ("__init__", "__main__"))
    assert [str(path.relative_to(ROOT)) for path in modules if path.stem not in words] == []


def test_every_rules_file_is_named():
    words = named(block("rules", "workflow"))
    assert [path.name for path in sorted((ROOT / "workflow" / "rules").glob("*.smk")) if path.stem not in words] == []


def test_a_part_without_an_entry_is_refused():
    with pytest.raises(AssertionError, match="no entry nowhere/"):
        block("nowhere")
