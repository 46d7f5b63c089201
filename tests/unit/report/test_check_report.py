"""make report-check (report/cli/check_report.py): a page whose first screen lacks the scale or the
claims table fails, with what is missing in one line; with Chromium on PATH, small pages are opened
as the report is."""

import shutil
import subprocess
import sys

import pytest

from rlstudy.report.cli.check_report import problems

GOOD = {"scale": "This report: smoke scale (the smoke profile).", "scale_on_screen": True, "rows": 3,
        "first_row_on_screen": True, "rows_without_verdict": 0, "links": 2, "unknown_links": []}


@pytest.mark.parametrize("change, message", [
    ({"scale": None}, "no sentence 'This report"),
    ({"scale": "This report: big scale"}, "no sentence 'This report"),
    ({"scale_on_screen": False}, "the sentence naming the scale is not on the first screen"),
    ({"rows": 0}, "no claims table"),
    ({"first_row_on_screen": False}, "first row is not on the first screen"),
    ({"rows_without_verdict": 2}, "2 rows of the claims table have no verdict"),
    ({"unknown_links": ["figures/x.png"]}, "figure links to results the report lacks"),
])
def test_each_failed_check_is_named(change, message):
    assert problems(GOOD) == []
    assert any(message in problem for problem in problems({**GOOD, **change}))


def page(spacer_px: int) -> str:
    """A page like the report's front page: the scale, then the claims table after spacer_px of text."""
    return f"""<html><body><script>var results = {{"figures/a.png": {{}}}};</script>
<p><strong>This report: smoke scale (test).</strong></p><div style="height: {spacer_px}px"></div>
<table class="claims"><thead><tr><th>claim</th><th>verdict</th></tr></thead>
<tbody><tr><td>a <a href="javascript:app.showResultInfo('figures/a.png')">a</a></td><td>holds</td></tr></tbody></table>
</body></html>"""


@pytest.mark.skipif(not any(map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))),
                    reason="no headless Chromium on PATH (Debian: apt-get install -y chromium)")
def test_a_table_below_the_first_screen_fails_and_one_on_it_passes(tmp_path):
    for spacer, ok in ((100, True), (2000, False)):
        report = tmp_path / f"report{spacer}.html"
        report.write_text(page(spacer))
        done = subprocess.run([sys.executable, "-m", "rlstudy.report.cli.check_report", str(report)],
                              capture_output=True, text=True)
        assert done.returncode == (0 if ok else 2), done.stdout + done.stderr
        if not ok:
            assert "the claims table's first row is not on the first screen" in done.stderr
