"""render_readme against the protocol (issue 42): a confirmatory run's verdicts are published only when its
seed plan, its claims' shared settings and its analysis code are the ones protocol.lock holds; a claim
changed or added after the protocol is published apart, with no verdict; an exploratory run gets no verdict."""

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.markdown import markers
from rlstudy.core.provenance import provenance, read_record, sha256_file
from rlstudy.core.seed_blocks import CONFIRMATORY, EXPLORATORY, seed_lists
from rlstudy.report.lock import make_lock
from rlstudy.report.protocol import analysis_code, lock_text, seed_plan_table

from hostile import ROOT, cli, one_line_error  # noqa: F401 (cli: a fixture)
from test_hostile_render import HEAD, in_repository, published_results, render_args  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(not HEAD, reason="not a git checkout")
CLAIMS_SCHEMA = ROOT / "workflow" / "schemas" / "claims.schema.yaml"
CONFIG_SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def protocol_run(folder: Path, block: str = CONFIRMATORY) -> tuple[dict, Path]:
    """Published results whose claims.csv holds the first two claims of a copy of claims.yaml and names a
    seed plan of `block` (config.yaml's confirmatory plan) as its input; and a lock of them (not committed:
    the runs below pass --allow-any-results, which spares the protocol commit alone)."""
    paths = published_results(folder)
    claims_file = folder / "claims.yaml"
    shutil.copy(ROOT / "claims.yaml", claims_file)
    lock = make_lock(ROOT, claims_file, ROOT / "config.yaml", CONFIG_SCHEMA)
    lock["analysis_code"] = analysis_code(ROOT, lock, HEAD)  # the run's commit's code, whatever the checkout holds
    exploratory = seed_lists(yaml.safe_load((ROOT / "config.yaml").read_text()))
    plan = lock["seed_plan"] if block == CONFIRMATORY else exploratory
    if block == CONFIRMATORY:  # the tables of the run: its seeds (the sweep's: its tuning list's)
        for option, key in (("--sweep", "cbo_sweep.seeds"), ("--cost", "seeds.control"),
                            ("--agents-results-table", "dqn.seeds"), ("--offline-results-table", "offline.seeds")):
            record = read_record(paths[option], "its record")
            save_csv(paths[option], pd.read_csv(paths[option]).assign(seed=plan[key][0]), record)
    save_csv(folder / "seed_plan.csv", seed_plan_table(block, plan), provenance({"seed_block": block}, None, {}))
    declared = yaml.safe_load(claims_file.read_text())["claims"][:2]
    table = pd.DataFrame({"id": [c["id"] for c in declared], "statement": [c["statement"] for c in declared],
                          "verdict": ["holds", "fails"], "evidence": ["e1", "e2"]})
    record = read_record(paths["--claims"], "its record")
    record["inputs"] |= {name: {"path": str(path), "sha256": sha256_file(path)}
                         for name, path in (("claims", claims_file), ("seed_plan", folder / "seed_plan.csv"))}
    save_csv(paths["--claims"], table, record)
    (folder / "protocol.lock").write_text(lock_text(lock))
    return {**paths, "--claims-file": claims_file, "--protocol": folder / "protocol.lock"}, claims_file


def rewrite_lock(paths: dict, **changes) -> None:
    lock = json.loads(paths["--protocol"].read_text())
    paths["--protocol"].write_text(lock_text({**lock, **changes}))


def test_a_confirmatory_run_of_the_lock_is_published_with_its_protocol(tmp_path, cli, in_repository):
    paths, _ = protocol_run(tmp_path)
    status, err = cli("report.cli.render_readme", *render_args(paths, "--allow-any-results"))
    assert status == 0, err
    readme, page = paths["--readme"].read_text(), paths["--claims-page"].read_text()
    assert "2 claims, 1 holds, 1 fails" in readme and "protocol commit uncommitted" in readme
    assert "Seed block: confirmatory" in page and "Exploratory, no verdict" not in page


@pytest.mark.parametrize("change, message", [
    ({"seed_plan_sha256": "0" * 64}, "its seed plan differs from the protocol's"),
    ({"claims_shared_sha256": "0" * 64}, "its claims' shared settings (the defaults: levels, sizes) differ"),
    ({"analysis_code": {"src/rlstudy/claims/rules.py": "0" * 64}}, "the analysis code of its commit differs"),
])
def test_a_confirmatory_run_that_differs_from_the_lock_is_refused(tmp_path, cli, in_repository, change, message):
    paths, _ = protocol_run(tmp_path)
    rewrite_lock(paths, **change)
    before = paths["--readme"].read_text(), paths["--claims-page"].read_text()
    one_line_error(*cli("report.cli.render_readme", *render_args(paths, "--allow-any-results")), message)
    assert (paths["--readme"].read_text(), paths["--claims-page"].read_text()) == before  # nothing written


def test_a_confirmatory_run_without_a_committed_protocol_is_refused(tmp_path, cli, in_repository):
    paths, _ = protocol_run(tmp_path)
    one_line_error(*cli("report.cli.render_readme", *render_args(paths)), "protocol.lock: not committed")
    paths["--protocol"].unlink()
    one_line_error(*cli("report.cli.render_readme", *render_args(paths, "--allow-any-results")),
                   "protocol.lock: no protocol")


def test_a_claim_changed_after_the_protocol_is_published_apart_without_a_verdict(tmp_path, cli, in_repository):
    paths, claims_file = protocol_run(tmp_path)
    first, second = yaml.safe_load(claims_file.read_text())["claims"][:2]
    lock = json.loads(paths["--protocol"].read_text())
    rewrite_lock(paths, claims={**lock["claims"], first["id"]: "0" * 64})  # the lock held another definition
    status, err = cli("report.cli.render_readme", *render_args(paths, "--allow-any-results"))
    assert status == 0, err
    readme, page = paths["--readme"].read_text(), paths["--claims-page"].read_text()
    assert "1 claims, 0 holds, 1 fails, 0 inconclusive; 1 more exploratory, no verdict" in readme
    assert f"`{first['id']}` (changed after the protocol commit)" in page
    start, end = markers("claims-table")
    verdicts = page.split(start)[1].split(end)[0]
    assert f"| `{first['id']}` |" not in verdicts and f"| `{second['id']}` |" in verdicts  # no verdict row for it
    # beside each previous publication's verdict (docs/publications/), none of this run's
    assert re.search(rf"\| `{first['id']}` \|( (holds|fails|inconclusive|not published) \|)+ "
                     r"no verdict \(changed or added after the protocol commit\) \|  \|", page)
    assert len(readme.split("<!-- headline-figures")[0].splitlines()) == 1 + 7 + 2  # the block keeps its 7 lines (+2: the claims not in this run)
    del lock["claims"][first["id"]]  # a claim the lock does not hold: added after the protocol
    rewrite_lock(paths, claims=lock["claims"])
    status, err = cli("report.cli.render_readme", *render_args(paths, "--allow-any-results"))
    assert status == 0, err
    assert f"`{first['id']}` (added after the protocol commit)" in paths["--claims-page"].read_text()


def test_an_exploratory_run_is_published_as_exploratory_lock_or_none(tmp_path, cli, in_repository):
    paths, _ = protocol_run(tmp_path, block=EXPLORATORY)
    paths["--protocol"].unlink()
    status, err = cli("report.cli.render_readme", *render_args(paths))
    assert status == 0, err
    readme, page = paths["--readme"].read_text(), paths["--claims-page"].read_text()
    assert "no verdict" in readme and "holds" not in readme.split("<!-- claims:start")[1]
    assert "Seed block: exploratory" in page and "| outcome on the exploratory seeds (no verdict) |" in page


def test_every_block_of_the_study_pages_names_its_seed_block_and_a_table_of_another_block_is_refused(
        tmp_path, cli, in_repository):
    paths, _ = protocol_run(tmp_path)
    status, err = cli("report.cli.render_readme", *render_args(paths, "--allow-any-results"))
    assert status == 0, err
    for page in ("--study-page", "--agents-results-page", "--offline-results-page"):
        text = paths[page].read_text()
        assert text.count(":start (generated by make readme) -->\nSeed block: confirmatory (fresh seeds") == text.count(
            ":start (generated by make readme) -->"), page
    record = read_record(paths["--agents-results-table"], "its record")
    save_csv(paths["--agents-results-table"], pd.read_csv(paths["--agents-results-table"]).assign(seed=3), record)
    before = paths["--readme"].read_text()
    one_line_error(*cli("report.cli.render_readme", *render_args(paths, "--allow-any-results")),
                   "seeds [3] are not of the confirmatory seed block")
    assert paths["--readme"].read_text() == before


def test_a_changed_carried_verdict_voids_the_lock_naming_the_publication(tmp_path, cli, in_repository):
    """The publication whose verdicts the carried claims keep is locked as the code is (report/lock.py): a
    lock that holds another version of it (a carried verdict changed) refuses the run, naming the file."""
    paths, _ = protocol_run(tmp_path)
    lock = json.loads(paths["--protocol"].read_text())
    publication = "docs/publications/protocol-1.json"
    assert lock["analysis_code"][publication] == sha256_file(ROOT / publication)
    rewrite_lock(paths, analysis_code={**lock["analysis_code"], publication: "0" * 64})
    one_line_error(*cli("report.cli.render_readme", *render_args(paths, "--allow-any-results")),
                   "the analysis code of its commit differs from the protocol's", f"in {publication}")
