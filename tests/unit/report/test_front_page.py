"""The report's front page block (report/front_page.py, rule front_page): the scale first, then every
claim with its verdict, its decisive test and links to the figures behind it, valid reStructuredText."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from docutils.core import publish_parts

from rlstudy.claims.loading import load_claims
from rlstudy.report import front_page
from rlstudy.report.front_page import decisive_test, figures_behind, render, seed_list

ROOT = Path(__file__).resolve().parents[3]
RANKING = ("UR < DS in final_rel_error: exact Wilcoxon signed-rank test (paired by seed), one-sided, level 0.05, "
           "n = 10 pairs: p = {p} (reverse p = 0.9); medians 1 vs 2")
FIGURES = ["figures/ours/q_control_sgd.png", "figures/ours/q_control_cbo.png", "figures/ours/q_control_cbo-adaptive.png",
           "figures/authors/q_control_sgd.png", "figures/ours/q_evaluation_sgd.png", "figures/ours/cost_evaluations.png",
           "figures/ours/cbo_sweep.png", "figures/agents/mpo_vs_ddpg_learning_curve.png",
           "figures/agents/ddpg_learning_curve.png", "figures/offline_CartPole-v1.png", "figures/ours/budget_control.png"]


def html_of(rst: str) -> str:
    """The block as Snakemake renders the front page; any docutils warning fails."""
    return publish_parts(rst, writer="html", settings_overrides={"halt_level": 2, "report_level": 2})["body"]


def claims():
    evidence = (f"[holds] {RANKING.format(p=0.001)} | [holds] {RANKING.format(p=0.02)}",
                f"[inconclusive] {RANKING.format(p=0.3)} | [fails] share of rows = 0.5 | [fails] second",
                "[inconclusive] table 'agents' not given")
    return pd.DataFrame({"id": ["two-tests", "one-fails", "agents"],
                         "statement": ["*Starred* e_k/e_0 | piped `code`", "1. Looks like a list", "MPO beats DDPG"],
                         "verdict": ["holds", "fails", "inconclusive"], "evidence": list(evidence)})


DECLARED = [
    {"id": "two-tests", "tests": [{"table": "summary", "where": {"dataset": "ours", "task": "control", "setting": "sgd"}}]},
    {"id": "one-fails", "tests": [{"table": "summary", "where": {"dataset": "ours", "task": "control"},
                                   "lower": {"setting": "cbo-adaptive"}, "higher": {"setting": "sgd"}}]},
    {"id": "agents", "tests": [{"table": "agents", "where": {}, "lower": {"agent": "mpo"}, "higher": {"agent": "ddpg"}}]},
]


def page():
    return render(claims(), DECLARED, FIGURES, scale="smoke scale (the smoke profile)", commit="abc123",
                  seeds="master seed 1", datasets="ours")


def test_the_scale_comes_first_then_the_claims_table():
    rst = page()
    assert rst.index("**This report: smoke scale") < rst.index("Claims and verdicts") < rst.index(".. list-table::")
    html = html_of(rst)
    assert "<strong>This report: smoke scale (the smoke profile).</strong>" in html
    assert 'class="claims' in html and html.count("<tr>") == 4  # the header and three claims
    assert "abc123" in html and "3 claims" in html and "1 holds, 1 fails, 1 inconclusive" in html


def test_statements_are_literal_text():
    html = html_of(page())
    assert "*Starred* e_k/e_0 | piped `code`" in html and "<em>Starred</em>" not in html
    assert "1. Looks like a list" in html and "<ol" not in html


def test_the_decisive_test_decides_the_verdict():
    rows = claims()
    assert decisive_test("holds", rows["evidence"][0]) == (2, 2, RANKING.format(p=0.02))  # the largest p
    assert decisive_test("fails", rows["evidence"][1]) == (2, 3, "share of rows = 0.5")  # the first failing
    assert decisive_test("inconclusive", rows["evidence"][2]) == (1, 1, "table 'agents' not given")
    html = html_of(page())
    assert "test 2 of 2: UR &lt; DS" in html and "test 2 of 3: share of rows = 0.5" in html


def test_each_claim_links_the_figures_of_the_runs_its_tests_read():
    assert figures_behind(DECLARED[0], FIGURES) == ["figures/ours/q_control_sgd.png"]  # not the authors', not cbo
    assert figures_behind(DECLARED[1], FIGURES) == ["figures/ours/q_control_sgd.png",
                                                    "figures/ours/q_control_cbo-adaptive.png"]
    assert figures_behind(DECLARED[2], FIGURES) == ["figures/agents/mpo_vs_ddpg_learning_curve.png",
                                                    "figures/agents/ddpg_learning_curve.png"]
    html = html_of(page())
    assert ('<a class="reference external" href="javascript:app.showResultInfo(\'figures/ours/q_control_sgd.png\')">'
            "ours/q_control_sgd</a>") in html


def test_only_figures_the_report_holds_are_linked():
    """A link to a result the report lacks would blank its page."""
    assert figures_behind(DECLARED[0], ["figures/ours/q_control_cbo.png"]) == []
    rst = render(claims(), DECLARED, [], scale="paper scale", commit="c", seeds="s", datasets="d")
    assert "showResultInfo" not in rst and "Figures:" not in rst


def test_every_shipped_claim_names_a_figure_of_a_complete_run():
    """Every claim of claims.yaml finds its figure among the names of a paper-scale run with the
    authors' data (the names of its rules' outputs)."""
    names = [f"figures/{d}/{kind}_{t}_{s}.png" for d in ("ours", "authors") for kind in ("q",)
             for t in ("evaluation", "control") for s in ("sgd", "cbo", "cbo-adaptive")]
    names += [f"figures/{d}/cost_evaluations.png" for d in ("ours", "authors")]
    names += ["figures/ours/reference_error.png", "figures/ours/cbo_sweep.png", "figures/ours/budget_control.png",
              "figures/ours/budget_evaluation.png", "figures/offline_CartPole-v1.png",
              "figures/offline_PongNoFrameskip-v4.png", "figures/agents/mpo_vs_ddpg_learning_curve.png",
              *(f"figures/agents/{a}_learning_curve.png" for a in ("qtable", "linear_q", "dqn", "ddpg"))]
    declared = load_claims(ROOT / "claims.yaml", ROOT / "workflow/schemas/claims.schema.yaml")["claims"]
    assert [claim["id"] for claim in declared if not figures_behind(claim, names)] == []


def test_seed_lists_are_written_as_runs():
    assert seed_list([0, 1, 2, 3, 5, 7, 8]) == "0-3, 5, 7, 8" and seed_list([]) == "none"


def step(tmp_path, claims_table, seeds='{"master": 1, "settings": {"sgd": {"control": [0, 1]}}}',
         figures=("figures/ours/q_control_sgd.png",)):
    """write_front_page as rule front_page runs it, on a claims table of the test's."""
    table = tmp_path / "claims.csv"
    claims_table.to_csv(table, index=False)
    return subprocess.run([sys.executable, "-m", "rlstudy.report.cli.write_front_page", "--claims", str(table),
                           "--claims-file", str(ROOT / "claims.yaml"),
                           "--schema", str(ROOT / "workflow/schemas/claims.schema.yaml"), "--scale", "paper scale",
                           "--seeds", seeds, "--datasets", "ours", "--figures", *figures,
                           "--out", str(tmp_path / "front.rst")], capture_output=True, text=True)


def test_the_step_writes_the_block_with_its_provenance(tmp_path):
    rows = claims().assign(id=["ds-worse-control-qstar", "one-fails", "agents"])  # the first a shipped claim's
    done = step(tmp_path, rows)
    assert done.returncode == 0, done.stderr
    block = (tmp_path / "front.rst").read_text()
    assert "**This report: paper scale.**" in block and "sgd 0, 1" in block and "our trajectories only" in block
    assert "showResultInfo('figures/ours/q_control_sgd.png')" in block
    assert (tmp_path / "front.rst.provenance.json").is_file()


def test_the_step_names_a_verdict_it_does_not_know(tmp_path):
    done = step(tmp_path, claims().assign(verdict=["holds", "maybe", "fails"]))
    assert done.returncode == 2 and "['maybe']" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "front.rst").exists()


@pytest.mark.parametrize("seeds", ['{"master": 1}', '{"master": 1, "settings": [0, 1]}'])
def test_the_step_names_a_bad_seed_block(tmp_path, seeds):
    done = step(tmp_path, claims(), seeds=seeds)
    assert done.returncode == 2 and "--seeds" in done.stderr


@pytest.mark.parametrize("rows, figures, message", [
    (claims().assign(id=["two-tests", "x**y", "agents"]), ("figures/ours/q_control_sgd.png",), "claim ids ['x**y']"),
    (claims(), ("figures/a'b.png",), "--figures: paths"),
])
def test_an_id_or_a_path_that_would_break_the_page_is_refused(tmp_path, rows, figures, message):
    """They go into the page's markup and into a link's script, unescaped."""
    done = step(tmp_path, rows, figures=figures)
    assert done.returncode == 2 and message in done.stderr


@pytest.mark.parametrize("built", [True, False], ids=["block-built", "no-block"])
def test_the_front_page_template_renders_as_snakemake_renders_it(tmp_path, monkeypatch, built):
    """workflow/report/workflow.rst through Jinja (as Snakemake's report: its config, its files) and
    docutils: the generated block included where the report holds it, a note where it does not."""
    import yaml
    from jinja2 import Environment

    class Snakemake:
        config = yaml.safe_load((ROOT / "config.yaml").read_text())

    class File:
        path = Path("results/report/front_page.rst")

    monkeypatch.chdir(tmp_path)  # docutils reads the included block relative to the working folder
    (tmp_path / "results" / "report").mkdir(parents=True)
    (tmp_path / "results" / "report" / "front_page.rst").write_text(page())
    template = (ROOT / "workflow" / "report" / "workflow.rst").read_text()
    text = Environment(trim_blocks=True, lstrip_blocks=True).from_string(template).render(
        snakemake=Snakemake, categories={}, files=[File()] if built else [])
    html = html_of(text)
    assert ("This report: smoke scale" in html) == built and ('class="claims' in html) == built
    assert ("holds no claims table" in html) != built
    assert "<style>" in html and "rlstudy-front-page" in html


@pytest.mark.parametrize("rows, counts", [(3, "1 holds, 1 fails, 1 inconclusive"), (2, "1 holds, 1 fails, 0 inconclusive")])
def test_the_front_page_marks_and_counts_verdicts_as_the_readme_and_the_claims_page_do(rows, counts):
    """One run's verdicts shown one way on every page that publishes them (report/verdicts.py)."""
    from rlstudy.report.cli.render_readme import render as readme_block, render_page

    table = claims().head(rows)
    rst = render(table, DECLARED, FIGURES, scale="s", commit="abc123", seeds="s", datasets="d").splitlines()
    readme, claims_page = readme_block(table, "abc123"), render_page(table, "abc123", problem=None).splitlines()
    assert f"(claims.yaml): {counts}." in " ".join(rst)
    assert f"{rows} claims, {counts}." in readme and f"(commit abc123): {counts}." in claims_page[1]
    for claim, mark in zip(table["id"], ("holds", "**fails**", "*inconclusive*")):
        assert rst[next(i for i, line in enumerate(rst) if line.startswith(f"   * - **{claim}**")) + 1] == f"     - {mark}"
        assert f"- {mark} (1): `{claim}`" in readme
        assert next(line for line in claims_page if line.startswith(f"| `{claim}` |")).split(" | ")[-2] == mark


def test_the_seeds_line_names_the_seed_block():
    """The front page says which block its seeds are (issue 40: scale, commit and seed block on the first screen)."""
    settings = {"sgd": {"control": [10000, 10001, 10002], "evaluation": [10000, 10001, 10002]}}
    assert front_page.seeds_note(7, settings, "confirmatory").startswith(
        "the confirmatory block (fresh seeds, run after the protocol commit): master seed 7")
    assert front_page.seeds_note(7, settings, "exploratory").startswith("the exploratory block")
    assert front_page.seeds_note(7, settings).endswith("replicate seeds: sgd 10000-10002")
