"""The claims page's previous-publications block (report/publications_page.py): each earlier protocol's
verdicts beside this run's, from publication files read as data; the run's own publication left out."""

import json

import pandas as pd
import pytest

from rlstudy.core.errors import InputError
from rlstudy.report.publications_page import END, START, render_previous

FIRST, SECOND = "1" * 40, "2" * 40


def publish(root, protocol: int, commit: str, verdicts: dict) -> None:
    folder = root / "docs" / "publications"
    folder.mkdir(parents=True, exist_ok=True)
    record = {"format": 1, "about": "a fixture", "protocol": protocol, "commit": commit, "protocol_commit": None,
              "verdicts": {claim: {"verdict": verdict} for claim, verdict in verdicts.items()}}
    (folder / f"protocol-{protocol}.json").write_text(json.dumps(record))


RUN = pd.DataFrame({"id": ["a", "b", "new"], "verdict": ["holds", "holds", "fails"]})


def test_each_claim_s_published_verdict_stands_beside_this_run_s_and_a_move_is_marked(tmp_path):
    publish(tmp_path, 1, FIRST, {"a": "holds", "b": "inconclusive", "gone": "fails"})
    block = render_previous(tmp_path, RUN, SECOND, confirmatory=True)
    assert block.startswith(START) and block.endswith(END)
    assert "Protocol 1's confirmatory run (commit 1111111111111111111111111111111111111111; protocol commit not " \
           "recorded in its manifest), read from `docs/publications/protocol-1.json`: 1 holds, 1 fails, " \
           "1 inconclusive." in block
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    assert rows == ["| `a` | holds | holds | no |", "| `b` | inconclusive | holds | **moved** |",
                    "| `gone` | fails | not in this run |  |", "| `new` | not published | fails |  |"]


def test_the_run_s_own_publication_is_not_a_previous_one_and_an_exploratory_run_says_so(tmp_path):
    publish(tmp_path, 1, FIRST, {"a": "holds"})
    assert "No previous publication" in render_previous(tmp_path, RUN, FIRST, confirmatory=True)
    assert "No previous publication" in render_previous(tmp_path / "empty", RUN, FIRST, confirmatory=True)
    publish(tmp_path, 2, SECOND, {"a": "fails"})
    block = render_previous(tmp_path, RUN, "3" * 40, confirmatory=False)
    assert "| claim | protocol 1 | protocol 2 | this run (exploratory: no verdict) |" in block
    assert "| `a` | holds | fails | holds | **moved** |" in block  # moved: against the last publication


def test_a_hostile_publication_is_refused_naming_its_file(tmp_path):
    publish(tmp_path, 1, FIRST, {"a": "holds"})
    path = tmp_path / "docs" / "publications" / "protocol-1.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "verdicts": {"a": {"verdict": "holds | injected"}}}))
    with pytest.raises(InputError, match="protocol-1.json: not a protocol's publication"):
        render_previous(tmp_path, RUN, SECOND, confirmatory=True)
