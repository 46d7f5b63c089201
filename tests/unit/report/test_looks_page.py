"""The claims page's looks block (report/looks_page.py) from looks made by the look step's own functions on a
small hand-made design: the seeds each list ran against the design's maximum and a fixed design's count."""

import pandas as pd
import pytest

from rlstudy.claims.looks import decide, lists_rows, read_claims_file
from rlstudy.core.errors import InputError
from rlstudy.report.looks_page import END, START, fixed_counts, render_looks, run_design

from looks_fixtures import CLAIMS, LISTS, PLAN

# effect 0.95: the exact sign test at level 0.25 reaches power 0.8 at 2 pairs (2 of 2: p = 0.25, power
# 0.95^2 = 0.9025; 1 pair cannot hold), so a fixed design runs 2 where this design's maximum is 6.
PAIRED = {"claim": "a-below-b", "test": 1, "kind": "paired", "lists": ["x.seeds"], "level": 0.25, "power": 0.8,
          "effect": 0.95, "maximum": 6}
SHARE = {"claim": "c-passes", "test": 1, "kind": "share", "lists": ["y.seeds"], "level": 0.25, "power": 0.8,
         "effect": 0.99, "maximum": 4}
DESIGN = {"looks": 2, "spending": "pocock", "futility": "non-binding",
          "lists": {"x.seeds": {"maximum": 6, "needed": 9, "looks": [3, 6], "job_minutes": 2.0},
                    "y.seeds": {"maximum": 4, "needed": 4, "looks": [2, 4], "job_minutes": 0.5}},
          "tests": [PAIRED, SHARE]}
TABLE = pd.DataFrame([{"g": g, "seed": s, "v": v} for s in range(100, 106) for g, v in (("a", -1.0), ("b", 0.0), ("c", -1.0))])


def make_looks(root):
    """Look 1: the paired claim holds at 3 of 3 pairs (x stops at 3), the share waits; look 2: y at 4."""
    counts, before = {"x.seeds": 3, "y.seeds": 2}, {}
    for look in (1, 2):
        rows = decide(look, DESIGN, LISTS, PLAN, CLAIMS, {"t": TABLE}, before)
        lists = lists_rows(look, rows, LISTS, counts)
        folder = root / f"look{look}"
        folder.mkdir(parents=True)
        pd.DataFrame(rows).to_csv(folder / "claims.csv", index=False)
        pd.DataFrame(lists).to_csv(folder / "lists.csv", index=False)
        before = read_claims_file(folder / "claims.csv")
        counts = {row["list"]: row["next_count"] for row in lists}


def test_the_block_states_the_seeds_run_against_the_design_s_maximum_and_a_fixed_design_s(tmp_path):
    make_looks(tmp_path)
    assert fixed_counts(DESIGN) == {"x.seeds": 2, "y.seeds": 4}
    block = render_looks(DESIGN, tmp_path, "abc123")
    assert block.startswith(START) and block.endswith(END) and "2 looks made" in block
    assert "| `x.seeds` | 3, 6 | 3 | 2 | 6 | 9 |" in block  # stopped at look 1
    assert "| `y.seeds` | 2, 4 | 4 | 4 | 4 | 4 |" in block
    # job-minutes: run 3 x 2 + 4 x 0.5 = 8; fixed 2 x 2 + 4 x 0.5 = 6; maximum 6 x 2 + 4 x 0.5 = 14
    assert "| 8 | 6 | 14 | |" in block
    paired = next(line for line in block.splitlines() if line.startswith("| `a-below-b`"))
    assert "n 3: p 0.125 (hold at p <= 0.125); holds" in paired
    share = next(line for line in block.splitlines() if line.startswith("| `c-passes`"))
    assert "n 2: not tested (open)" in share and "n 4: p 0.0625" in share


def test_a_run_without_looks_says_it_has_no_design(tmp_path):
    assert run_design(tmp_path / "protocol.lock", tmp_path) == {}
    assert "no group-sequential design" in render_looks({}, tmp_path, "abc123")


def test_a_hostile_look_file_is_refused_naming_it(tmp_path):
    make_looks(tmp_path)
    (tmp_path / "look2" / "lists.csv").write_text("list,look,count,status,next_count\nx.seeds,2,3,continue,99\n")
    with pytest.raises(InputError, match="look2/lists.csv"):
        render_looks(DESIGN, tmp_path, "abc123")
