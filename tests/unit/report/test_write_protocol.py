"""make protocol (rlstudy.report.cli.write_protocol) on fixtures: the lock holds the sha256 of claims.yaml,
each claim's, the confirmatory seed plan's and the analysis code's; --check names what moved since;
record_seed_plan writes the run's seed plan the claims rule reads."""

import json
import shutil

import pandas as pd
import yaml

from rlstudy.core.provenance import read_record, sha256_file
from rlstudy.core.seed_blocks import digest
from rlstudy.report.protocol import ANALYSIS_CODE, analysis_files

from hostile import ROOT, cli, one_line_error  # noqa: F401 (cli: a fixture)


def test_the_lock_holds_the_claims_the_seed_plan_and_the_analysis_code(tmp_path, cli):
    claims = tmp_path / "claims.yaml"
    shutil.copy(ROOT / "claims.yaml", claims)
    lock = tmp_path / "protocol.lock"
    args = ("--root", str(ROOT), "--claims", str(claims), "--config", str(ROOT / "config.yaml"),
            "--schema", str(ROOT / "workflow" / "schemas" / "config.schema.yaml"), "--out", str(lock))
    status, err = cli("report.cli.write_protocol", *args)
    assert status == 0, err
    written = json.loads(lock.read_text())
    assert written["claims_file"]["sha256"] == sha256_file(claims)
    declared = yaml.safe_load(claims.read_text())
    assert set(written["claims"]) == {claim["id"] for claim in declared["claims"]}
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    start = config["confirmatory_block"]["start"]
    assert written["seed_plan"]["seeds.control"][0] == start
    assert written["seed_plan_sha256"] == digest(written["seed_plan"])
    assert {"src/rlstudy/claims/rules.py", "src/rlstudy/core/statistics.py"} <= set(written["analysis_code"])
    assert set(written["analysis_code"]) == set(analysis_files(written["analysis_code"]))
    status, err = cli("report.cli.write_protocol", *args, "--check")
    assert status == 0, err
    first = declared["claims"][0]
    claims.write_text(claims.read_text().replace(first["statement"], first["statement"] + " (reworded)", 1))
    status, _ = cli("report.cli.write_protocol", *args, "--check")
    assert status == 1  # a claim changed since the lock


def test_a_star_stays_within_its_folder():
    assert analysis_files(["src/rlstudy/claims/rules.py", "src/rlstudy/claims/cli/compare_verdicts.py",
                           "src/rlstudy/claims/cli/evaluate_claims.py", "src/rlstudy/core/io.py"]) == [
        "src/rlstudy/claims/cli/evaluate_claims.py", "src/rlstudy/claims/rules.py"]
    assert "src/rlstudy/claims/*.py" in ANALYSIS_CODE


def test_the_run_seed_plan_is_recorded_with_its_block(tmp_path, cli):
    out = tmp_path / "seed_plan.csv"
    plan = {"seeds.control": [10000, 10001], "mpo.seeds": [10000]}
    status, err = cli("report.cli.record_seed_plan", "--block", "confirmatory", "--plan", json.dumps(plan),
                      "--out", str(out))
    assert status == 0, err
    table = pd.read_csv(out)
    assert list(table.itertuples(index=False, name=None)) == [("seeds.control", 10000, "confirmatory"),
                                                               ("seeds.control", 10001, "confirmatory"),
                                                               ("mpo.seeds", 10000, "confirmatory")]
    assert read_record(out, "its record")["parameters"] == {"seed_block": "confirmatory", "plan": plan}
    one_line_error(*cli("report.cli.record_seed_plan", "--block", "confirmatory", "--plan", '{"x": [-1]}',
                        "--out", str(out)), "--plan: expected a mapping")
