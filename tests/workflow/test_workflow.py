"""The Snakemake workflow at smoke scale, in temporary copies of the project."""

import os
import re
import shutil
import time
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from rlstudy.runtime.warmstart import protocol as warm_protocol

from project_copy import DATASETS, SMOKE, copy_project, digests, is_measured, snakemake

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("project"))


def test_lint_is_clean(workdir):
    result = snakemake(workdir, "--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Lints for" not in result.stdout + result.stderr


def test_dry_run_plans_every_stage(workdir):
    result = snakemake(workdir, *SMOKE, "-n")
    assert result.returncode == 0, result.stderr
    for rule in ("trajectory", "exact_q", "reference", "reference_table", "run_method", "summary", "q_figure",
                 "reference_figure", "trajectory_figure", "claims"):
        assert rule in result.stdout


def test_bad_config_stops_before_any_job(workdir):
    result = snakemake(workdir, *SMOKE, "--config", "seeds=[-1]")
    assert result.returncode != 0
    assert "config key 'seeds.0'" in result.stdout + result.stderr
    assert not (workdir / "data").exists()


def test_smoke_workflow_builds_every_figure_and_table(smoke_project):
    workdir = smoke_project
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    names = [f"{d}/q_{t}_{o}" for d in DATASETS for t in config["tasks"] for o in ("sgd", *config["cbo"]["settings"])]
    names += [f"{d}/{kind}" for d in DATASETS
              for kind in [*(f"trajectory_{t}" for t in config["tasks"]), *(f"fourier_error_{t}" for t in config["tasks"]),
                           "cost_evaluations", "cost_seconds"]]
    names += ["ours/cbo_sweep", "ours/reference_error", *(f"ours/budget_{t}" for t in config["tasks"])]
    for name in names:
        for fmt in ("png", "pdf"):
            assert (workdir / "figures" / f"{name}.{fmt}").stat().st_size > 10_000, name
            assert (workdir / "figures" / f"{name}.{fmt}.provenance.json").is_file(), name
    for gif in (workdir / "figures").rglob("*.gif"):
        assert gif.with_name(gif.name + ".provenance.json").is_file(), gif

    summary = pd.read_csv(workdir / "results" / "summary.csv")
    assert list(summary.columns) == ["dataset", "task", "setting", "estimator", "seed", "iterations",
                                     "final_rel_error", "min_rel_error", "final_rel_error_exact",
                                     "min_rel_error_exact", "evaluations", "converged", "converged_exact",
                                     "final_error_exact_normalised", "final_error_exact_common_normalised",
                                     "final_greedy_shortfall", "final_greedy_wrong_share",
                                     "final_error_exact_weighted_normalised"]
    assert sorted(summary["dataset"].unique()) == sorted(DATASETS)
    smoke = yaml.safe_load((workdir / "workflow/profiles/smoke/scale.yaml").read_text())
    settings = config["cbo"]["settings"]
    runs_per_task = len(config["sgd"]["estimators"]) * len(smoke["seeds"]) + sum(
        len(settings[name]["estimators"]) * len(smoke["cbo"]["settings"][name]["seeds"]) for name in settings)
    assert len(summary) == len(DATASETS) * len(config["tasks"]) * runs_per_task
    assert summary[["final_rel_error", "final_rel_error_exact"]].notna().all().all()
    greedy = ["final_greedy_shortfall", "final_greedy_wrong_share"]
    control = summary["task"] == "control"
    assert np.isfinite(summary.loc[control, greedy].to_numpy()).all()  # every control run is scored
    assert summary.loc[~control, greedy].isna().all().all()  # evaluation runs are not
    assert np.isfinite(summary[["final_error_exact_normalised", "final_error_exact_common_normalised",
                                "final_error_exact_weighted_normalised"]]).all().all()
    assert set(summary[summary["setting"] == "cbo-adaptive"]["estimator"]) == {"DS", "UR", "BFF-matched"}
    stats = pd.read_csv(workdir / "results" / "summary_stats.csv")
    assert len(stats) == len(summary.groupby(["dataset", "task", "setting", "estimator"]))
    assert (stats["n"] >= 1).all() and stats.loc[stats["n"] >= 3, "final_rel_error_exact_ci_low"].notna().all()
    assert stats.loc[stats["n"] < 3, "final_rel_error_exact_ci_low"].isna().all()  # no interval from 2 seeds
    references = pd.read_csv(workdir / "results" / "reference" / "error_exact.csv")
    assert len(references) == len(DATASETS) * len(config["tasks"])
    assert (references["error_exact_normalised"] > 0).all()
    assert (references["error_exact_common_normalised"] > 0).all()
    assert np.isfinite(references.loc[references["task"] == "control", ["greedy_shortfall", "greedy_wrong_share"]]).all().all()
    fourier = pd.read_csv(workdir / "results" / "fourier_error.csv")
    assert len(fourier) == len(summary) * 13  # modes 0..12 of every run
    assert np.isfinite(fourier[["error", "error_normalised", "bellman_contraction"]]).all().all()
    claims = pd.read_csv(workdir / "results" / "claims.csv")
    assert list(claims["id"]) == [c["id"] for c in yaml.safe_load((workdir / "claims.yaml").read_text())["claims"]]
    assert set(claims["verdict"]) <= {"holds", "fails", "inconclusive"}
    power = pd.read_csv(workdir / "results" / "seed_power.csv")  # every rank test with enough seeds at smoke scale
    assert set(power["id"]) <= set(claims["id"]) and power.filter(like="power_at_").apply(lambda c: c.between(0, 1)).all().all()
    for curve in (workdir / "results" / "runs").rglob("errors.csv"):
        assert (curve.parent / "errors.csv.provenance.json").is_file()
    assert list((workdir / "logs" / "runs").rglob("*.benchmark.tsv"))
    sweep = pd.read_csv(workdir / "results" / "sweep" / "cbo_sweep.csv")
    axes = [[v for k, v in grid.items() if k != "with"] for grid in smoke["cbo_sweep"]["grids"].values()]
    n_points = sum(len(x) * len(y) for x, y in axes)
    assert len(sweep) == n_points * len(smoke["cbo_sweep"].get("seeds", config["cbo_sweep"]["seeds"]))
    cost = pd.read_csv(workdir / "results" / "cost.csv")
    assert len(cost) == len(summary) and (cost["evaluations_to_bound_exact"] > 0).all()
    budget = pd.read_csv(workdir / "results" / "budget" / "budget.csv")
    fitted = budget[budget["part"] != "optimiser"]  # per task: the two reaches, and each estimator's two minimisers
    assert config["budget"]["weights"] == "stationary"  # so the weighted reach is fitted too
    assert len(fitted) == len(config["tasks"]) * (2 + 2 * len(config["budget"]["estimators"]))
    reaches = budget[budget["part"].str.startswith("reach")].set_index(["task", "part"])
    for task in config["tasks"]:  # the weighted reach, fitted on from the uniform one, is no farther where the data are
        uniform, weighted = reaches.loc[(task, "reach")], reaches.loc[(task, "reach_weighted")]
        assert weighted["error_exact_weighted_normalised"] <= 1.05 * uniform["error_exact_weighted_normalised"]
    runs = budget[budget["part"] == "optimiser"]
    assert len(runs) == len(summary[summary["dataset"] == "ours"].groupby(["task", "setting", "estimator"]))
    assert np.isfinite(budget[["error_exact_normalised", "error_exact_weighted_normalised"]]).all().all()


def one_output_per_rule(workdir: Path) -> dict[str, Path]:
    """The first output (in path order) of every rule of the smoke run, read from `snakemake --summary`:
    one job of each rule, so a rule added later is covered without editing this test."""
    result = snakemake(workdir, *SMOKE, "--summary")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.split("\t") for line in result.stdout.splitlines() if "\t" in line]
    header, rows = lines[0], lines[1:]
    file_col, rule_col = header.index("output_file"), header.index("rule")
    chosen: dict[str, Path] = {}
    for row in sorted(rows, key=lambda r: r[file_col]):
        path = workdir / row[file_col]
        if row[rule_col] not in chosen and path.exists() and not is_measured(path):
            chosen[row[rule_col]] = path
    return chosen


def rule_depths(workdir: Path) -> dict[str, int]:
    """Every rule's depth in the smoke run's rule graph (`snakemake --rulegraph`): 0 for a rule that
    needs no other rule's output, else one more than the deepest rule whose output it needs."""
    result = snakemake(workdir, *SMOKE, "--rulegraph")
    assert result.returncode == 0, result.stderr[-3000:]
    labels = dict(re.findall(r'^\s*(\d+)\[label = "([^"]+)"', result.stdout, re.M))
    needs: dict[str, set[str]] = {rule: set() for rule in labels.values()}
    for source, target in re.findall(r"^\s*(\d+) -> (\d+)", result.stdout, re.M):
        if labels[source] != labels[target]:  # a job reading another job of its own rule (budget_reach's weighted fit)
            needs[labels[target]].add(labels[source])

    @cache
    def depth(rule: str) -> int:
        return 1 + max((depth(need) for need in needs[rule]), default=-1)

    return {rule: depth(rule) for rule in needs}


def wait_for_server_exit(workdir: Path) -> str:
    """The warm-start server's log, once the server has exited (within POLL_S of the run's end)."""
    log = workdir / warm_protocol.SERVER_LOG
    for _ in range(int(20 * warm_protocol.POLL_S)):
        if log.exists() and "exiting" in log.read_text():
            break
        time.sleep(0.2)
    return log.read_text()


def test_every_rule_rebuilds_its_outputs_byte_identically(smoke_project, tmp_path):
    """Same config, same platform: byte-identical artefacts. One output of every rule is deleted from
    a copy of the smoke build and rebuilt, and everything under data/, results/ and figures/ (but the
    measured wall times, project_copy.MEASURED) must equal the first build. Each deleted job runs
    exactly once: the jobs are rebuilt by depth in the rule graph, shallowest first, so that every
    job's inputs are there when it runs, and without the modification-time trigger, so that a file
    rebuilt (byte for byte) in an earlier round does not rerun the untouched jobs that read it. A
    rebuild in one round reran 68 of the 178 smoke jobs; a whole second build, all of them. The smoke
    build's jobs ran warm (runtime/warmstart/: forks of one process that had imported their libraries)
    and the rebuild's run cold, each in a new interpreter: the same bytes both ways."""
    served = re.findall(r"served (\d+) job", wait_for_server_exit(smoke_project))
    jobs = re.findall(r"(\d+) of \d+ steps \(100%\) done", (smoke_project / "smoke.log").read_text())
    assert served and int(served[-1]) >= 0.9 * int(jobs[-1]), (served, jobs)  # the first jobs start it
    copy = tmp_path / "project"
    shutil.copytree(smoke_project, copy, symlinks=True)
    chosen = one_output_per_rule(copy)
    assert {"trajectory", "run_method", "reference", "train_agent", "mpo_train", "offline_train", "summary",
            "claims"} <= chosen.keys(), sorted(chosen)
    depths = rule_depths(copy)
    for path in chosen.values():
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    for depth in sorted({depths[rule] for rule in chosen}):
        layer = [str(path.relative_to(copy)) for rule, path in chosen.items() if depths[rule] == depth]
        result = snakemake(copy, *layer, "--rerun-triggers", "code", "params", "input", "software-env",
                           *SMOKE, env={**os.environ, warm_protocol.OPT_OUT: "0"})  # targets before --config
        assert result.returncode == 0, result.stderr[-3000:]
        ran = re.search(r"(\d+) of \d+ steps \(100%\) done", result.stderr)
        assert ran and int(ran.group(1)) == len(layer), (layer, result.stderr[-3000:])
    assert all(p.exists() for p in chosen.values())
    first, second = digests(smoke_project), digests(copy)
    assert first and first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_report_is_one_self_contained_page_with_every_figure(smoke_project):
    workdir = smoke_project
    result = snakemake(workdir, *SMOKE, "--report", "report.html")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "(ERROR/" not in result.stdout + result.stderr  # every caption is valid reStructuredText
    html = (workdir / "report.html").read_text()
    for figure in (workdir / "figures").rglob("*.png"):
        assert figure.name in html, figure
    assert "cbo_sweep.csv" in html and "summary.csv" in html and "claims.csv" in html
    # Offline: nothing is fetched from elsewhere when the page opens.
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']https?://""", html)
