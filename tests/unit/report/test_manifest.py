"""The manifest of a run (report/cli/write_manifest.py) and verify's judgement of a rebuilt artefact
against it (report/cli/verify.py); the rebuild itself: tests/workflow/test_verify.py."""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import run_step
from project_copy import MEASURED

from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv, write_artefact
from rlstudy.report import manifest as write_manifest
from rlstudy.report import platform, verify, verify_claims
from rlstudy.report.manifest import dumps, kind_of, manifest, seed_block
from rlstudy.report.manifest_schema import load_manifest

ROOT = Path(__file__).resolve().parents[3]


def test_measured_files_are_the_tests_measured_files():
    assert write_manifest.MEASURED == MEASURED


def test_claims_read_the_tables_the_manifest_keeps():
    """TABLES repeats claims.smk's CLAIM_TABLES (the claims' inputs) and adds the verdicts."""
    rules = ROOT / "workflow" / "rules"
    text = (rules / "claims.smk").read_text()
    block = text.split("CLAIM_TABLES = {", 1)[1].split("}", 1)[0]
    # a value named by a constant of the rules files (SEED_PLAN = "results/seed_plan.csv") is that path
    constants = dict(re.findall(r'^([A-Z_]+) = "([^"]+)"$', "".join(p.read_text() for p in rules.glob("*.smk")), re.M))
    entries = (line.split("#")[0].strip().rstrip(",").replace('"', "").split(": ") for line in block.strip().splitlines())
    assert {name: path for name, path in write_manifest.TABLES.items() if name != "claims"} == \
        {name: constants.get(value, value) for name, value in entries}


@pytest.mark.parametrize("path, kind", [
    ("figures/ours/q_control_sgd.png", "figure"),
    ("data/trajectories/ours/control/short/states.npy", "trajectory"),
    ("data/trajectories/authors/control/short/states.npy", "authors-import"),
    ("results/exact/control/reward_next/q_exact.npy", "exact"),
    ("results/exact/control/stationary_density.npy", "density"),
    ("results/reference/error_exact.csv", "reference-error"),
    ("results/reference/control/q_star.pt", "reference"),
    ("results/agents/qtable/seed0/returns.csv", "tabular-agent"),
    ("results/agents/dqn/seed0/returns.csv", "agent"),
    ("results/agents/summary.csv", "table"),
    ("results/runs/ours/control/sgd/UR/seed0/errors.csv", "run"),
    ("results/sweep/kick/beta=1/seed100/errors.csv", "run"),
    ("results/offline/CartPole-v1/seed0/bcq/q.pt", "offline"),
    ("results/summary.csv", "table"),
])
def test_kinds(path, kind):
    assert kind_of(path) == kind
    assert kind in verify.CROSS_PLATFORM or kind in verify.measured_rules()  # every kind has its rule


@pytest.fixture
def run_folder(tmp_path):
    """A tiny run: an artefact with its record, a measured wall time, the references and claims tables."""
    (tmp_path / "config.yaml").write_text("seed: 7\nseeds: [0, 1]\nagents:\n  seeds: [3]\n")
    record = {"git_commit": "a" * 40, "parameters": {}}
    write_artefact(tmp_path / "data/trajectories/ours/control/short/states.npy", b"states", record)
    write_artefact(tmp_path / "results/runs/ours/control/sgd/UR/seed0/wall_time.csv", b"seconds\n1.5\n", record)
    write_artefact(tmp_path / "results/reference/error_exact.csv", b"task,error\ncontrol,0.1234\n", record)
    import pandas as pd
    save_csv(tmp_path / "results/claims.csv", pd.DataFrame(
        {"id": ["a", "b"], "verdict": ["holds", "fails"], "evidence": ["p=0.01", "p=0.4"]}), record)
    (tmp_path / "results/.gitkeep").write_text("")
    return tmp_path


def test_the_seed_block_is_the_runs_own_plan_where_it_wrote_one(run_folder):
    """The bug: the manifest listed config.yaml's lists as written (the exploratory block's) for a
    confirmatory run; it now lists the run's seed plan, or the config's lists as its block resolves them."""
    (run_folder / "config.yaml").write_text("seed: 7\nseeds: [0, 1]\nseed_block: confirmatory\n"
                                            "confirmatory_block: {start: 100, counts: {seeds: 3}}\n")
    assert seed_block(run_folder, "paper") == {"block": "confirmatory", "from": "config.yaml",
                                               "lists": {"seeds": [100, 101, 102]}}
    (run_folder / "results/seed_plan.csv").write_text("list,seed,block\nseeds,100,confirmatory\nseeds,101,confirmatory\n"
                                                      "mpo.seeds,100,confirmatory\n")
    assert seed_block(run_folder, "paper") == {"block": "confirmatory", "from": "results/seed_plan.csv",
                                               "lists": {"seeds": [100, 101], "mpo.seeds": [100]}}



def test_a_manifest_lists_every_artefact_once_with_its_sha256(run_folder):
    record = manifest(run_folder, "paper", ["--config", "authors_data=x"])
    states = run_folder / "data/trajectories/ours/control/short/states.npy"
    assert record["artefacts"]["data/trajectories/ours/control/short/states.npy"] == {
        "sha256": hashlib.sha256(b"states").hexdigest(), "size": 6, "kind": "trajectory"}
    assert states.with_name("states.npy.provenance.json").exists()
    assert not any(path.endswith(".provenance.json") or path.endswith(".gitkeep") for path in record["artefacts"])
    assert record["artefacts"]["results/runs/ours/control/sgd/UR/seed0/wall_time.csv"]["measured"] is True
    assert record["counts"]["provenance_records"] == 4 and record["counts"]["artefacts"] == 4
    assert record["commits_of_artefacts"] == {"a" * 40: 4}
    assert record["tables"]["references"]["rows"] == [["control", "0.1234"]]
    assert record["verdicts"] == {"a": "holds", "b": "fails"}
    assert record["seed"] == 7 and record["seed_block"] == {"block": "exploratory", "from": "config.yaml",
                                                            "lists": {"seeds": [0, 1], "agents.seeds": [3]}}
    assert record["snakemake_args"] == ["--config", "authors_data=x"]
    rounding = record["platform"]["rounding"]
    assert {"cpu_model", "blas_flags", "openblas_kernels", "torch_cpu_capability", "versions"} <= set(rounding)
    assert json.loads(dumps(record)) == record


def test_an_empty_run_and_a_foreign_file_are_refused(tmp_path):
    (tmp_path / "config.yaml").write_text("seed: 1\n")
    with pytest.raises(InputError, match="no artefact"):
        manifest(tmp_path, "paper", [])
    (tmp_path / "m.json").write_text('{"format": 99}')
    with pytest.raises(InputError, match="not a manifest"):
        load_manifest(tmp_path / "m.json")


def test_the_command_writes_the_manifest(run_folder):
    done = subprocess.run([sys.executable, "-m", "rlstudy.report.cli.write_manifest", "--scale", "paper",
                           "--out", "docs/manifest.json"], cwd=run_folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "4 artefacts (1 measured" in done.stdout
    assert load_manifest(run_folder / "docs/manifest.json")["scale"] == "paper"


@pytest.fixture
def published(run_folder):
    return manifest(run_folder, "paper", [])


def rebuilt(tmp_path, name, data: bytes) -> Path:
    path = tmp_path / "rebuilt" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_judge_on_the_manifests_platform_wants_every_bit(published, tmp_path):
    path = "data/trajectories/ours/control/short/states.npy"
    assert verify.judge(path, rebuilt(tmp_path, "a", b"states"), published, True) == ("identical", False)
    assert verify.judge(path, rebuilt(tmp_path, "b", b"statez"), published, True)[1] is True
    wall = "results/runs/ours/control/sgd/UR/seed0/wall_time.csv"
    assert verify.judge(wall, rebuilt(tmp_path, "c", b"2.0"), published, True) == ("measured (not compared)", False)


def test_judge_on_another_platform_applies_the_measured_tolerances(published, tmp_path):
    references = "results/reference/error_exact.csv"
    close = rebuilt(tmp_path, "r1", b"task,error\ncontrol,0.1236\n")  # three digits agree
    far = rebuilt(tmp_path, "r2", b"task,error\ncontrol,0.1300\n")
    assert verify.judge(references, close, published, False)[1] is False
    assert verify.judge(references, close, published, False)[0].startswith("within tolerance")
    assert verify.judge(references, far, published, False)[1] is True
    assert verify.judge(references, close, published, True)[1] is True  # the same platform: not within anything
    # a trajectory repeated byte for byte under every emulated BLAS setting: a difference is one
    result, fails = verify.judge("data/trajectories/ours/control/short/states.npy", rebuilt(tmp_path, "t", b"x"),
                                 published, False)
    assert result.startswith("different (another platform") and fails
    run = "results/runs/ours/control/sgd/UR/seed0/errors.csv"
    published["artefacts"][run] = {"sha256": "0" * 64, "size": 1, "kind": "run"}
    result, fails = verify.judge(run, rebuilt(tmp_path, "e", b"x"), published, False)
    assert result.startswith("chaotic") and not fails


def test_the_platform_differs_by_what_the_libraries_run_not_by_the_environment():
    here = platform.platform_record()["rounding"]
    assert platform.differing_platform(here, dict(here)) == []
    assert platform.differing_platform(here, {**here, "openblas_kernels": "Other"}) == ["openblas_kernels"]
    assert platform.differing_platform(here, {**here, "environment": {"OPENBLAS_CORETYPE": "Other"}}) == []


def test_a_moved_verdict_is_reported(published, tmp_path):
    tmp_path = tmp_path / "scratch"
    (tmp_path / "results").mkdir(parents=True)
    (tmp_path / "results/claims.csv").write_text("id,verdict,evidence\na,holds,p=0.01\nb,holds,p=0.04\n")
    work = tmp_path.parent / "work"
    work.mkdir()
    lines, moved = verify_claims.compare_claims(published, tmp_path, work)
    assert moved and any("`b`: fails -> holds" in line for line in lines)
    (tmp_path / "results/claims.csv").write_text("id,verdict,evidence\na,holds,p=0.02\nb,fails,p=0.5\n")
    assert verify_claims.compare_claims(published, tmp_path, work)[1] is False


def test_a_run_decided_look_by_look_is_not_projected(published, tmp_path, monkeypatch):
    """A sample's rebuilt rows are not projected into the tables of a group-sequential run: its claims were
    decided by its looks, which the projection cannot replay (the bug: protocol 2's sample, its artefacts
    identical, reported a moved verdict that a fixed evaluation of the tables gave). A whole rebuilt run's
    verdicts are still compared (RUN=.)."""
    looked = {**published, "artefacts": {**published["artefacts"],
                                         "results/looks/look1/claims.csv": {"sha256": "0" * 64, "size": 1}}}
    monkeypatch.setattr(verify_claims, "project_rows", lambda *args: pytest.fail("projected a run of looks"))
    sample, work = tmp_path / "sample", tmp_path / "work"
    (sample / "results").mkdir(parents=True)
    work.mkdir()
    lines, moved = verify_claims.compare_claims(looked, sample, work)
    assert not moved and len(lines) == 1 and "decided its claims look by look" in lines[0]
    (sample / "results/claims.csv").write_text("id,verdict,evidence\na,holds,p=0.01\nb,holds,p=0.04\n")
    lines, moved = verify_claims.compare_claims(looked, sample, work)
    assert moved and any("`b`: fails -> holds" in line for line in lines)


def test_verdicts_are_compared_under_the_analysis_code_that_decided_them(published, tmp_path, monkeypatch):
    """A checkout whose analysis code is its protocol.lock's compares a rebuild's verdicts with the manifest's
    (an edited one shows as moved); one whose code differs compares them with its own code's verdicts on the
    published tables, so that a changed test is not taken for a moved rebuild, and says so."""
    scratch = tmp_path / "scratch"
    (scratch / "results").mkdir(parents=True)
    (scratch / "results/claims.csv").write_text("id,verdict,evidence\na,holds,p=0.02\nb,holds,p=0.01\n")
    rules = scratch / "src" / "rlstudy" / "claims" / "rules.py"
    rules.parent.mkdir(parents=True)
    rules.write_text("# the rules\n")
    lock = {"protocol": 2, "claims_shared_sha256": "", "claims": {}, "seed_plan_sha256": "", "seed_plan": {},
            "config_values": {}, "analysis_code": {"src/rlstudy/claims/rules.py": hashlib.sha256(b"# the rules\n").hexdigest()}}
    (scratch / "protocol.lock").write_text(json.dumps(lock))
    assert verify_claims.analysis_changed(scratch) == []
    (tmp_path / "w1").mkdir()
    lines, moved = verify_claims.compare_claims(published, scratch, tmp_path / "w1")
    assert moved and any("`b`: fails -> holds" in line for line in lines)  # the manifest's own verdicts

    rules.write_text("# the rules, changed\n")
    assert verify_claims.analysis_changed(scratch) == ["src/rlstudy/claims/rules.py"]

    def evaluate(tables, out, cwd):  # this checkout's code on the published tables: b holds
        out.write_text("id,verdict,evidence\na,holds,p=0.02\nb,holds,p=0.01\n")

    monkeypatch.setattr(verify_claims, "evaluate", evaluate)
    (tmp_path / "w2").mkdir()
    lines, moved = verify_claims.compare_claims(published, scratch, tmp_path / "w2")
    assert not moved and any("1 files differ from protocol.lock's" in line and "decide 1 of 2 published verdicts "
                             "otherwise" in line for line in lines)

    def unreadable(tables, out, cwd):  # this checkout's claims read a column the published tables lack
        raise verify_claims.PipelineError("the claims on the tables: no column 'evaluation_episodes'")

    monkeypatch.setattr(verify_claims, "evaluate", unreadable)
    (tmp_path / "w3").mkdir()
    lines, moved = verify_claims.compare_claims(published, scratch, tmp_path / "w3")
    assert not moved and len(lines) == 1 and "verdicts not compared" in lines[0] and "evaluation_episodes" in lines[0]


def test_verify_compares_a_finished_run_as_it_is(run_folder, capsys, monkeypatch):
    """--run (make verify RUN=.): the run against its own manifest agrees; a changed byte or a moved
    verdict does not, with status 1 (both steps run in this process, as `python -m` runs them)."""
    monkeypatch.chdir(run_folder)
    assert run_step(capsys, monkeypatch, "report.cli.write_manifest", "--scale", "paper", "--out", "manifest.json")[0] == 0

    def verify_run():
        status, out, err = run_step(capsys, monkeypatch, "report.cli.verify", "--manifest", "manifest.json", "--run", ".")
        return subprocess.CompletedProcess("verify", status, out, err)

    done = verify_run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "platform: the manifest's" in done.stdout and "3 identical, 1 measured" in done.stdout
    assert "verdicts: 2 claims compared, 0 moved" in done.stdout
    assert sorted(p.name for p in run_folder.iterdir()) == ["config.yaml", "data", "manifest.json", "results"]

    import pandas as pd
    save_csv(run_folder / "results/claims.csv", pd.DataFrame(  # rewritten by its rule: a record of the new bytes
        {"id": ["a", "b"], "verdict": ["holds", "holds"], "evidence": ["p=0.01", "p=0.04"]}), {"parameters": {}})
    done = verify_run()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "`results/claims.csv` | table | different" in done.stdout and "`b`: fails -> holds **moved**" in done.stdout
