"""The HTML report of the smoke build reads like a supplement (issue 40): its front page names its
scale and shows the claims table with links to the figures, its captions name the scale they were
built at, and every figure is readable at the report's width. With Chromium on PATH, the page is
opened as a reader would and its first screen checked (rlstudy.report.cli.check_report)."""

import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from figure_layout import MAX_ASPECT, png_size
from project_copy import SMOKE, snakemake

pytestmark = pytest.mark.integration
REPORT = "report-front-page.html"  # its own file: test_workflow.py writes report.html


@pytest.fixture(scope="module")
def report(smoke_project):
    result = snakemake(smoke_project, *SMOKE, "--report", REPORT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "(ERROR/" not in result.stdout + result.stderr and "(WARNING/" not in result.stdout + result.stderr
    return smoke_project / REPORT


def page_data(report, name: str):
    """One of the JSON values the report's page script holds (var workflow_desc, var results)."""
    # the template's own line, a JSON value (a library of the page has a "var results" too)
    match = re.search(rf"^\s*var {name} = ([{{\"].*);\s*$", report.read_text(), re.MULTILINE)
    assert match, name
    return json.loads(match.group(1))


def test_every_figure_is_readable_at_the_reports_width(smoke_project):
    """The Q figures were 1 x 4 strips (about 6 to 1), the sweep 5 to 1."""
    strips = {}
    for figure in sorted((smoke_project / "figures").rglob("*.png")):
        width, height = png_size(figure)
        if width / height > MAX_ASPECT:
            strips[str(figure.relative_to(smoke_project))] = round(width / height, 2)
    assert strips == {}


def test_the_front_page_names_the_scale_and_shows_every_claim(report, smoke_project):
    front = page_data(report, "workflow_desc")
    assert "This report: smoke scale" in front
    assert front.index("This report: smoke scale") < front.index('class="claims')
    claims = pd.read_csv(smoke_project / "results" / "claims.csv")
    table = front[front.index('class="claims'):]
    assert table.count("<tr>") == len(claims) + 1
    for row in claims.itertuples():
        assert f"<strong>{row.id}</strong>" in table


def test_the_claims_link_figures_the_report_holds(report):
    front, results = page_data(report, "workflow_desc"), page_data(report, "results")
    links = re.findall(r"javascript:app\.showResultInfo\('([^']+)'\)", front)
    assert links and set(links) <= set(results)
    assert "figures/ours/q_control_sgd.png" in links


def test_the_q_captions_name_the_scale_they_were_built_at(report):
    results = page_data(report, "results")
    captions = [entry["caption"] for path, entry in results.items() if re.search(r"figures/\w+/q_\w+", path)]
    assert captions
    for caption in captions:
        assert "paper scale" not in caption and "smoke scale" in caption


@pytest.mark.skipif(not any(map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))),
                    reason="no headless Chromium on PATH (Debian: apt-get install -y chromium)")
def test_the_first_screen_shows_the_scale_and_the_claims_table(report, tmp_path):
    done = subprocess.run([sys.executable, "-m", "rlstudy.report.cli.check_report", str(report),
                           "--screenshot", str(tmp_path / "screen.png")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "smoke scale" in done.stdout and png_size(tmp_path / "screen.png") == (1280, 900)
