"""compare_verdicts: each claim's verdict before and after a change, from the published page or a
claims.csv, with the claims a partial run could not test left out of the comparison."""

import subprocess
import sys

import pandas as pd

from rlstudy.claims.cli.compare_verdicts import compare, verdicts

PAGE = """# The claims and their verdicts

| claim | statement | verdict | evidence |
| --- | --- | --- | --- |
| `a-holds` | A \\| with a pipe. | holds | \\[holds\\] UR &lt; DS: p = 0.01 |
| `b-fails` | B. | **fails** | \\[fails\\] share 0.2 |
| `c-undecided` | C. | *inconclusive* | \\[inconclusive\\] p = 0.4 |
| `d-sweep` | D. | holds | \\[holds\\] p = 0.03 |
| `e-authors` | E. | holds | \\[holds\\] p = 0.02 |
"""


def after_table(tmp_path):
    rows = [("a-holds", "holds", "[holds] p = 0.02"), ("b-fails", "holds", "[holds] share 0.9"),
            ("c-undecided", "inconclusive", "[inconclusive] p = 0.3"),
            ("d-sweep", "inconclusive", "[inconclusive] table 'sweep' not given"),
            ("e-authors", "inconclusive", "[inconclusive] UR < DS: 0 vs 0 rows, fewer than 2"),
            ("f-new", "holds", "[holds] p = 0.01")]
    path = tmp_path / "claims.csv"
    pd.DataFrame(rows, columns=["id", "verdict", "evidence"]).to_csv(path, index=False)
    return path


def test_verdicts_moved_and_not_compared(tmp_path):
    page = tmp_path / "claims.md"
    page.write_text(PAGE)
    before = verdicts(str(page))
    assert before["verdict"].to_dict() == {"a-holds": "holds", "b-fails": "fails", "c-undecided": "inconclusive",
                                           "d-sweep": "holds", "e-authors": "holds"}
    table = compare(before, verdicts(str(after_table(tmp_path))))
    moved = table["moved"]
    assert moved["a-holds"] == False and moved["c-undecided"] == False  # noqa: E712 (pandas' boolean NA)
    assert moved["b-fails"] == True  # noqa: E712
    assert moved[["d-sweep", "e-authors", "f-new"]].isna().all()  # untested after, or a claim of one run only


def test_check_fails_only_when_a_compared_verdict_moved(tmp_path):
    page = tmp_path / "claims.md"
    page.write_text(PAGE)
    after = after_table(tmp_path)

    def status(before):
        return subprocess.run([sys.executable, "-m", "rlstudy.claims.cli.compare_verdicts", "--before", str(before),
                               "--after", str(after), "--check"], capture_output=True, text=True).returncode

    assert status(page) == 1  # b-fails moved
    assert status(after) == 0  # a run against itself
