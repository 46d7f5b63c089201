"""make protocol (rlstudy.report.cli.write_protocol) on fixtures: the lock holds the sha256 of claims.yaml,
each claim's, the config values the claims read, the verdict step's whole import closure by path, the
design, and seeds derived from its digest; a spent block is refused; --check names what moved since;
record_seed_plan writes the run's seed plan the claims rule reads."""

import json
import shutil
import subprocess

import pandas as pd
import yaml

from rlstudy.core.provenance import read_record, sha256_file
from rlstudy.core.seed_blocks import DERIVED_FLOOR, TUNING_OFFSET, digest, read_spent, spent_problems
from rlstudy.core.sources import module_sources
from rlstudy.report.lock import LOOK_STEP, SEED_FIELDS, VERDICT_STEP, derived_start
from rlstudy.report.protocol import protocol_1_files

from hostile import ROOT, cli, one_line_error  # noqa: F401 (cli: a fixture)
from test_hostile_render import HEAD

SHIPPED = yaml.safe_load((ROOT / "config.yaml").read_text())


def test_the_lock_holds_the_claims_the_seed_plan_and_the_analysis_code(tmp_path, cli):
    claims = tmp_path / "claims.yaml"
    shutil.copy(ROOT / "claims.yaml", claims)
    lock = tmp_path / "protocol.lock"
    config = tmp_path / "config.yaml"
    shutil.copy(ROOT / "config.yaml", config)
    args = ("--root", str(ROOT), "--claims", str(claims), "--config", str(config), "--no-design",
            "--schema", str(ROOT / "workflow" / "schemas" / "config.schema.yaml"), "--out", str(lock))
    status, err = cli("report.cli.write_protocol", *args)
    assert status == 0, err
    written = json.loads(lock.read_text())
    assert written["protocol"] == 2 and written["claims_file"]["sha256"] == sha256_file(claims)
    declared = yaml.safe_load(claims.read_text())
    assert set(written["claims"]) == {claim["id"] for claim in declared["claims"]}
    # the seeds: derived from the digest of everything else in the lock, none of protocol 1's
    source = digest({key: value for key, value in written.items() if key not in SEED_FIELDS})
    assert written["seed_source_sha256"] == source and written["seed_start"] == derived_start(source) >= DERIVED_FLOOR
    assert written["seed_plan"]["seeds.control"][0] == written["seed_start"]
    assert written["seed_plan"]["cbo_sweep.seeds"][0] == written["seed_start"] + TUNING_OFFSET
    assert written["seed_plan_sha256"] == digest(written["seed_plan"])
    assert spent_problems(written["seed_plan"], read_spent(ROOT / "spent_blocks.yaml")) == []
    # the verdict step's whole import closure, by path: core/loaders.py and core/config.py among them
    closure = {path.relative_to(ROOT).as_posix() for step in (VERDICT_STEP, LOOK_STEP)
               for path in module_sources(step, ROOT / "src")}
    rules = {"workflow/rules/claims.smk", "workflow/rules/looks.smk", "workflow/schemas/claims.schema.yaml"}
    # and the publications whose verdicts carried claims keep
    rules |= {path.relative_to(ROOT).as_posix() for path in (ROOT / "docs" / "publications").glob("protocol-*.json")}
    assert "docs/publications/protocol-1.json" in rules
    assert closure | rules == set(written["analysis_code"])
    assert {"src/rlstudy/claims/cli/decide_look.py", "src/rlstudy/core/looks.py"} <= closure
    assert {"src/rlstudy/core/loaders.py", "src/rlstudy/core/config.py", "src/rlstudy/claims/rules.py"} <= closure
    # the config values the claims read: every agent's bar and episodes, the cost bound, the counts
    assert written["config_values"]["dqn.solved_return"] == 475
    assert written["config_values"]["mpo.eval_episodes"] == SHIPPED["mpo"]["eval_episodes"]
    assert written["config_values"]["offline.evaluation_episodes"] == SHIPPED["offline"]["evaluation_episodes"]
    assert written["config_values"]["summary.converged_below"] == 0.5
    shipped = SHIPPED["confirmatory_block"]["counts"]["seeds.control"]
    assert written["config_values"]["confirmatory_block.counts.seeds.control"] == shipped
    status, err = cli("report.cli.write_protocol", *args, "--check")
    assert status == 0, err
    config.write_text(config.read_text().replace("solved_return: 475", "solved_return: 400", 1))
    status, out = cli("report.cli.write_protocol", *args, "--check")
    assert status == 1 and "config key dqn.solved_return" in out
    first = declared["claims"][0]
    claims.write_text(claims.read_text().replace(first["statement"], first["statement"] + " (reworded)", 1))
    status, _ = cli("report.cli.write_protocol", *args, "--check")
    assert status == 1  # a claim changed since the lock


def test_a_lock_whose_seeds_are_spent_or_written_by_hand_is_refused(tmp_path, cli):
    config = tmp_path / "config.yaml"
    config.write_text((ROOT / "config.yaml").read_text().replace("\n  start: protocol", "\n  start: 10000", 1))
    args = ("--root", str(ROOT), "--claims", str(ROOT / "claims.yaml"), "--no-design",
            "--schema", str(ROOT / "workflow" / "schemas" / "config.schema.yaml"), "--out", str(tmp_path / "lock"))
    one_line_error(*cli("report.cli.write_protocol", *args, "--config", str(config)),
                   "config key 'confirmatory_block.start' is 10000; a protocol's seeds are derived from its lock")
    spent = tmp_path / "spent.yaml"  # a block that spent every seed a derived start can give
    spent.write_text("spent:\n  - {protocol: 9, commit: abc, ranges: [[0, 2147483647]]}\n")
    one_line_error(*cli("report.cli.write_protocol", *args, "--config", str(ROOT / "config.yaml"), "--spent", str(spent)),
                   "were run by protocol 9")
    assert not (tmp_path / "lock").exists()
    # --check compares a lock with the checkout: the lock's own seeds are spent once its run began
    assert cli("report.cli.write_protocol", *args, "--config", str(ROOT / "config.yaml"))[0] == 0
    status, err = cli("report.cli.write_protocol", *args, "--config", str(ROOT / "config.yaml"), "--spent", str(spent),
                      "--check")
    assert status == 0, err


def test_the_blocks_run_are_recorded_as_spent():
    spent = read_spent(ROOT / "spent_blocks.yaml")
    first = {"seeds.control": list(range(10000, 10040)), "cbo_sweep.seeds": list(range(15000, 15008))}
    assert [block["protocol"] for block in spent] == [1, 2]
    assert len(spent_problems(first, spent)) == 2
    # the committed lock's block, once run: every seed its plan can hold, and the commit that wrote the lock
    lock = json.loads((ROOT / "protocol.lock").read_text())
    run = {block["protocol"]: block for block in spent}.get(lock["protocol"])
    if run is None:
        return
    assert len(spent_problems(lock["seed_plan"], [run])) == len(lock["seed_plan"])
    start, offset = lock["seed_start"], TUNING_OFFSET
    assert run["ranges"] == [[start, start + offset - 1], [start + offset, start + 2 * offset - 1]]
    if HEAD:
        written = subprocess.run(["git", "log", "--diff-filter=AM", "--format=%H", "--", "protocol.lock"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.split()
        assert run["commit"] == written[0]


def test_protocol_1s_analysis_code_keeps_its_patterns():
    assert protocol_1_files(["src/rlstudy/claims/rules.py", "src/rlstudy/claims/cli/compare_verdicts.py",
                             "src/rlstudy/claims/cli/evaluate_claims.py", "src/rlstudy/core/io.py"]) == [
        "src/rlstudy/claims/cli/evaluate_claims.py", "src/rlstudy/claims/rules.py"]


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


def test_the_design_is_locked_and_the_counts_must_be_its_maxima(tmp_path, cli):
    """The block holds every seed a look may use: each list's count is the design's maximum for it."""
    claims = tmp_path / "claims.yaml"
    declared = yaml.safe_load((ROOT / "claims.yaml").read_text())
    declared["claims"] = [claim for claim in declared["claims"] if claim["id"] == "ds-greedy-worse-control"]
    claims.write_text(yaml.safe_dump(declared, sort_keys=False))
    config = tmp_path / "config.yaml"
    shutil.copy(ROOT / "config.yaml", config)
    args = ("--root", str(ROOT), "--claims", str(claims), "--config", str(config),
            "--schema", str(ROOT / "workflow" / "schemas" / "config.schema.yaml"), "--out", str(tmp_path / "lock"))
    shipped = SHIPPED["confirmatory_block"]["counts"]["seeds.control"]
    one_line_error(*cli("report.cli.write_protocol", *args),
                   f"config key 'confirmatory_block.counts.seeds.control' is {shipped}, but the design's maximum "
                   "for it is 33")
    text = config.read_text().replace(f"    seeds.control: {shipped} ", "    seeds.control: 33 ", 1)
    config.write_text(text)
    status, err = cli("report.cli.write_protocol", *args)
    assert status == 0, err
    written = json.loads((tmp_path / "lock").read_text())
    assert written["design"]["lists"]["seeds.control"]["looks"] == [9, 17, 25, 33]
    assert len(written["seed_plan"]["seeds.control"]) == 33
