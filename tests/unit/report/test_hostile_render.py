"""render_readme against hostile and wrong inputs: refusing results that are not the published ones
(other parameters, other budgets, a commit not on this branch), escaping what it inserts, failing in one line."""

import io
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from PIL import Image

from rlstudy.bellman.results.bellman_page import NAMES
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv, write_artefact
from rlstudy.core.provenance import read_record, sha256_file
from rlstudy.core.markdown import markers
from rlstudy.report import headline_figures
from rlstudy.report.cli.render_readme import END, RESULTS_END, RESULTS_START, START, render, render_page, text

from hostile import ROOT, cli, one_line_error

def test_inserted_text_is_escaped_for_markdown_and_html():
    hostile = "a <!-- hides | the rest & `code` <b>x</b> *em* [l](u) \\ \nnext"
    escaped = text(hostile)
    assert "<" not in escaped and "\n" not in escaped and "<!--" not in escaped
    assert escaped == ("a &lt;!-- hides \\| the rest &amp; \\`code\\` &lt;b&gt;x&lt;/b&gt; \\*em\\* \\[l\\](u) \\\\ next")
    block = render_page(pd.DataFrame({"id": ["a", "b"], "statement": [hostile, "z"], "verdict": ["holds", "fails"],
                                      "evidence": [hostile, "e"]}), "c", problem=None)
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    assert len(rows) == 2 and rows[1] == "| `b` | z | **fails** | e |"  # the hostile statement hid nothing below it
    with pytest.raises(InputError, match="claim id"):
        render(pd.DataFrame({"id": ["a` | x"], "statement": ["s"], "verdict": ["holds"]}), "c")


HEAD = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())


def published_results(folder: Path, commit: str = HEAD, epochs: int | None = None) -> dict:
    """The tables render_readme reads, with records as the workflow writes them: a run of config.yaml's
    parameters (or of other epochs, as the smoke profile's), summary tables computed from it."""
    params = {**CONFIG["sgd"]["control"], **({"epochs": epochs} if epochs else {})}
    curve = folder / "runs" / "errors.csv"
    save_csv(curve, pd.DataFrame({"x": [1]}), {"parameters": {"task": "control", "setting": "sgd", "params": params}})
    inputs = {str(curve): {"path": str(curve), "sha256": sha256_file(curve)}}
    record = {"git_commit": commit, "inputs": inputs}
    columns = {f"{m}_{s}": [0.2] for m in ("final_rel_error", "final_rel_error_exact")
               for s in ("mean", "ci_low", "ci_high", "iqm")}
    save_csv(folder / "summary_stats.csv", pd.DataFrame({"dataset": ["ours"], "task": ["control"], "setting": ["sgd"],
                                                         "estimator": ["UR"], "n": [2], **columns}), record)
    save_csv(folder / "summary.csv", pd.DataFrame({"dataset": ["ours"], "task": ["control"], "estimator": ["UR"],
                                                   "setting": ["cbo-adaptive"],
                                                   "final_rel_error": [0.3], "final_rel_error_exact": [0.4]}), record)
    summary = folder / "summary.csv"
    save_csv(folder / "cbo_sweep.csv", pd.DataFrame({"grid": ["g_<i>"], "x": ["kick"], "x_value": [0.1], "y": ["noise"],
                                                     "y_value": [0.0], "seed": [100], "final_rel_error": [0.2],
                                                     "converged": [True], "diverged": [False]}), record)
    save_csv(folder / "cost.csv", pd.DataFrame({"dataset": ["ours"], "task": ["control"], "estimator": ["UR"],
                                                "setting": ["sgd"], "seed": [0], "bound": [0.5],
                                                "evaluations_to_bound_exact": [4e7], "evaluations": [1e8],
                                                "final_rel_error_exact": [0.2]}), record)
    (folder / "no_runs").mkdir()
    save_csv(folder / "claims.csv", pd.DataFrame({"id": ["a"], "statement": ["s <!-- x"], "verdict": ["holds"]}),
             {"git_commit": commit, "inputs": {"summary": {"path": str(summary), "sha256": sha256_file(summary)}}})
    save_csv(folder / "seed_power.csv", pd.DataFrame({"id": ["a<b>"], "test": [1], "hypothesis": ["UR < DS"],
                                                      "paired": [True], "n_first": [40], "n_second": [40],
                                                      "p": [0.03], "reverse_p": [0.97], "decided": [True],
                                                      "effect": ["3 pairs in 4 the claimed way"],
                                                      "planned_seeds": [23], "power_at_10": [0.25], "power_at_80": [0.9]}),
             {"git_commit": commit, "inputs": {"summary": {"path": str(summary), "sha256": sha256_file(summary)}}})
    save_csv(folder / "error_exact.csv", pd.DataFrame({"dataset": ["ours"], "task": ["control"], "made_by": ["m|x"],
                                                       "error_exact_normalised": [0.1]}), record)
    figures = headline_sources(folder, commit)
    (folder / "README.md").write_text(f"intro\n{START}\nold\n{END}\n{HEADLINE_BLOCK}")
    (folder / "claims.md").write_text("".join("page\n{}\nold\n{}\n".format(*markers(name))
                                              for name in ("claims-table", "looks", "previous-publications")))
    cbo = "".join(f"{start}\nold\n{end}\n" for start, end in map(markers, (*NAMES, "budget-results", "seed-power")))
    (folder / "bellman.md").write_text(f"page\n{RESULTS_START}\nold\n{RESULTS_END}\n{cbo}{HEADLINE_BLOCK}")
    return {"--claims": folder / "claims.csv", "--stats": folder / "summary_stats.csv",
            "--references": folder / "error_exact.csv", "--readme": folder / "README.md",
            "--claims-page": folder / "claims.md", "--seed-power": folder / "seed_power.csv",
            "--study-page": folder / "bellman.md", "--summary": summary, "--sweep": folder / "cbo_sweep.csv",
            "--cost": folder / "cost.csv", "--runs": folder / "no_runs", "--looks": folder / "no_looks", **figures, **study_tables(folder, commit)}


HEADLINE_BLOCK = "{}\nold\n{}\n".format(headline_figures.START, headline_figures.END)


def headline_sources(folder: Path, commit: str, block: str = "exploratory") -> dict:
    """Every headline figure of the run (a PNG wider than the published width) with its record, as the
    workflow writes them: of commit `commit`, paper scale, seed block `block`."""
    for number, headline in enumerate(headline_figures.HEADLINES):
        buffer = io.BytesIO()
        Image.new("RGB", (1500, 400), (number * 30 % 256, 90, 160)).save(buffer, format="PNG")
        write_artefact(folder / headline.source, buffer.getvalue(),
                       {"git_commit": commit, "scale": "paper", "seed_block": block})
    return {"--figures-project": folder, "--figures-folder": folder / "docs_figures"}


def study_tables(folder: Path, commit: str) -> dict:
    """The agents', the offline and the budget's tables, each from one run of config.yaml's scale, and their pages."""
    run = folder / "agents" / "dqn" / "seed0" / "evaluation.csv"
    save_csv(run, pd.DataFrame({"x": [1]}), {"parameters": {"agent": "dqn", "params": CONFIG["dqn"]["params"]}})
    agents = pd.DataFrame({"agent": ["dqn"], "env": ["CartPole-v1"], "seed": [0], "episodes": [9], "steps": [99],
                           "solved": [True], "solved_return": [475], "final_mean_return": [500.0]})
    env = CONFIG["offline"]["environments"][0]
    learner = folder / "offline" / env / "seed0" / "bcq" / "evaluations.csv"
    budget = CONFIG["offline"]["budgets"]["regular"]["offline"]
    save_csv(learner, pd.DataFrame({"x": [1]}), {"parameters": {
        "algorithm": "bcq", "iterations": budget, "env": {"env_id": env, "is_atari": False}}})
    offline = pd.DataFrame({"env": [env], "seed": [0], "learner": ["bcq <b>"], "iterations": [budget],
                            "at_least_buffer": [True], **{c: [1.0] for c in (
                                "final_return", "final_std", "best_return", "buffer_return", "behavioural_return")}})
    part = folder / "budget" / "control" / "reach" / "error.csv"
    save_csv(part, pd.DataFrame({"x": [1]}), {"parameters": {
        "part": "reach", "points": CONFIG["budget"]["points"], "fit": CONFIG["budget"]["fit"]}})
    budget = pd.DataFrame({"task": ["control"], "part": ["reach"], "estimator": ["any"], "setting": [float("nan")],
                           "error_exact_normalised": [0.0123], "converged": [True], "runs": [float("nan")],
                           "error_exact_normalised_min": [float("nan")], "error_exact_normalised_max": [float("nan")]})
    paths = {}
    for name, table, source in (("agents", agents, run), ("offline", offline, learner), ("budget", budget, part)):
        record = {"git_commit": commit, "inputs": {str(source): {"path": str(source), "sha256": sha256_file(source)}}}
        save_csv(folder / f"{name}_summary.csv", table, record)
        page = folder / ("bellman.md" if name == "budget" else f"{name}.md")  # the budget's block is on the study page
        if name != "budget":
            page.write_text(f"page\n<!-- {name}-results:start (generated by make readme) -->\n"
                            f"old\n<!-- {name}-results:end -->\n{HEADLINE_BLOCK}")
        paths |= {f"--{name}-results-table": folder / f"{name}_summary.csv", f"--{name}-results-page": page}
    return paths


def render_args(paths: dict, *more) -> list:
    return [*(item for pair in paths.items() for item in pair), *more]


@pytest.fixture
def in_repository(monkeypatch):
    monkeypatch.chdir(ROOT)  # make readme runs at the repository's root: its config.yaml and git history


@pytest.mark.skipif(not HEAD, reason="not a git checkout")
def test_published_results_are_rendered_escaped(tmp_path, cli, in_repository):
    paths = published_results(tmp_path)
    status, err = cli("report.cli.render_readme", *render_args(paths))
    assert status == 0, err
    readme = paths["--readme"].read_text()
    # a run made before the seed blocks (no seed plan in its record): the exploratory block's, no verdict headline
    assert f"commit {HEAD}" in readme and "no verdict" in readme and "- holds" not in readme
    assert "| `a` | s &lt;!-- x | holds |" in paths["--claims-page"].read_text()
    assert "Seed block: exploratory" in paths["--claims-page"].read_text()
    assert "| ours | control | m\\|x | 0.100 |" in paths["--study-page"].read_text()
    assert "| g\\_&lt;i&gt; | kick = 0.1, noise = 0 | 1 | 0.20 | 1 of 1 | 0 |" in paths["--study-page"].read_text()
    assert "| ours | control | UR | sgd | 1 of 1 | 4e+07 | 1e+08 | 0.20 |" in paths["--study-page"].read_text()
    assert "| dqn | CartPole-v1 | 0 | 9 | 99 | 500.0 | 475 | yes |" in paths["--agents-results-page"].read_text()
    assert "| bcq &lt;b&gt; |" in paths["--offline-results-page"].read_text()
    study_page = paths["--study-page"].read_text()  # the budget's block and the study's, on one page
    assert "| control | reach | any |  | 0.012 | yes |" in study_page and "| ours | control | m\\|x | 0.100 |" in study_page
    assert "| seeds it needs | power at 10 | power at 80 |" in study_page
    assert "| a&lt;b&gt; | 1 | 40 pairs | 0.03 | 3 pairs in 4 the claimed way | 23 | 0.25 | 0.90 |" in study_page


@pytest.mark.skipif(not HEAD, reason="not a git checkout")
@pytest.mark.parametrize("powers, message", [({"power_at_10": [1.5]}, "a power outside [0, 1]"),
                                             ({"power_at_10": ["x"]}, "a power outside [0, 1]"),
                                             ({}, "no power_at_<n> column"),
                                             ({"power_at_10": [0.2], "effect": None}, "no effect column")])
def test_a_broken_power_table_is_refused_before_any_page_is_written(tmp_path, cli, in_repository, powers, message):
    paths = published_results(tmp_path)
    table = pd.read_csv(paths["--seed-power"]).drop(columns=["power_at_10", "power_at_80"])
    if "effect" in powers:  # a table of observed power, written before the planned power
        table, powers = table.drop(columns=["effect"]), {k: v for k, v in powers.items() if k != "effect"}
    save_csv(paths["--seed-power"], table.assign(**powers), read_record(paths["--seed-power"], "its record"))
    before = paths["--study-page"].read_text()
    one_line_error(*cli("report.cli.render_readme", *render_args(paths)), message)
    assert paths["--study-page"].read_text() == before


@pytest.mark.skipif(not HEAD, reason="not a git checkout")
@pytest.mark.parametrize("change, message", [
    ({"epochs": 3}, "claims.csv: not from the paper-scale profile (run "),
    ({"commit": "0" * 40}, "not in this repository's history"),
    ({"commit": HEAD + "+dirty"}, "not a clean commit"),
    ({"commit": None}, "its provenance record has no field 'git_commit'"),
])
def test_results_not_from_the_paper_scale_and_a_commit_here_are_refused(tmp_path, cli, in_repository, change, message):
    """make smoke then render_readme by hand used to publish smoke-scale numbers in the tracked docs."""
    paths = published_results(tmp_path, commit=change.get("commit", HEAD), epochs=change.get("epochs"))
    before = paths["--readme"].read_text(), paths["--study-page"].read_text()
    one_line_error(*cli("report.cli.render_readme", *render_args(paths)), message, "--allow-any-results")
    assert (paths["--readme"].read_text(), paths["--study-page"].read_text()) == before
    status, err = cli("report.cli.render_readme", *render_args(paths, "--allow-any-results"))
    assert status == 0, err


def test_a_missing_readme_is_one_error(tmp_path, cli, in_repository):
    paths = published_results(tmp_path)
    paths["--readme"] = tmp_path / "nowhere" / "README.md"
    one_line_error(*cli("report.cli.render_readme", *render_args(paths, "--allow-any-results")),
                   "cannot read", "nowhere/README.md", "--readme")
    assert "old" in paths["--study-page"].read_text()  # nothing written when one target fails



@pytest.mark.skipif(not HEAD, reason="not a git checkout")
def test_a_study_table_from_other_budgets_is_refused(tmp_path, cli, in_repository):
    """The agents' and the offline pages' blocks pass the same paper-scale check as the CBO/BFF study's."""
    paths = published_results(tmp_path)
    run = tmp_path / "agents" / "dqn" / "seed0" / "evaluation.csv"
    save_csv(run, pd.DataFrame({"x": [1]}), {"parameters": {"agent": "dqn", "params": {
        **CONFIG["dqn"]["params"], "total_steps": 3000}}})
    table = paths["--agents-results-table"]
    save_csv(table, pd.read_csv(table), {"git_commit": HEAD, "inputs": {str(run): {"path": str(run),
                                                                                   "sha256": sha256_file(run)}}})
    one_line_error(*cli("report.cli.render_readme", *render_args(paths)),
                   "agents_summary.csv: not from the paper-scale profile", "total_steps 3000")


@pytest.mark.skipif(not HEAD, reason="not a git checkout")
def test_a_sweep_table_from_other_parameters_is_refused(tmp_path, cli, in_repository):
    """The sweep's block passed unchecked: its runs are now held to their point's parameters in config.yaml."""
    from rlstudy.bellman.learners.sweep import resolve_sweep, sweep_points
    paths = published_results(tmp_path)
    point = sweep_points(resolve_sweep(CONFIG))[0]
    run = tmp_path / "sweep" / point.grid / point.label / "seed100" / "errors.csv"
    save_csv(run, pd.DataFrame({"x": [1]}), {"parameters": {"task": "control", "setting": "cbo-sweep",
                                                            "params": {**point.params, "particles": 6}}})
    table = paths["--sweep"]
    save_csv(table, pd.read_csv(table), {"git_commit": HEAD, "inputs": {str(run): {"path": str(run),
                                                                                   "sha256": sha256_file(run)}}})
    one_line_error(*cli("report.cli.render_readme", *render_args(paths)),
                   "cbo_sweep.csv: not from the paper-scale profile", "particles 6")


def test_the_claims_page_shows_the_holm_adjusted_p_each_verdict_was_decided_on():
    """A sub-test printed as [holds] at the raw level inside a claim left inconclusive by Holm confused the
    page (ds-greedy-worse-control: raw 0.0403, adjusted 0.0807): the adjusted p stands beside the verdict."""
    claims = pd.DataFrame({"id": ["a", "b"], "statement": ["s", "t"], "verdict": ["inconclusive", "fails"],
                           "family": ["f", "refs"], "p": [0.0403452339, float("nan")],
                           "p_adjusted": [0.0806904678, float("nan")], "reverse_p": [1.0, float("nan")],
                           "reverse_p_adjusted": [1.0, float("nan")], "evidence": ["[holds] p = 0.0403", "e"]})
    rows = [line for line in render_page(claims, "c", problem=None).splitlines() if line.startswith("| `")]
    assert rows == ["| `a` | s | *inconclusive* | 0.0807 (0.0403); reverse 1 (1); family `f` | \\[holds\\] p = 0.0403 |",
                    "| `b` | t | **fails** | none: a description of the runs made (family `refs`) | e |"]
