"""The protocol commit (issue 42): the commit that last changed protocol.lock, committed before the
confirmatory run. Judged in a small git repository of its own: the lock committed after the run, or
changed since its commit, is refused; a run after it is judged against it."""

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import provenance, sha256_file
from rlstudy.core.seed_blocks import CONFIRMATORY
from rlstudy.report.protocol import judge, lock_text, make_lock, seed_plan_table

ROOT = Path(__file__).resolve().parents[3]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repository(tmp_path):
    """A repository with claims.yaml and one analysis file: commit `before`, then the protocol, then `after`."""
    repo = tmp_path / "repo"
    (repo / "src" / "rlstudy" / "claims").mkdir(parents=True)
    shutil.copy(ROOT / "claims.yaml", repo / "claims.yaml")
    (repo / "src" / "rlstudy" / "claims" / "rules.py").write_text("# the rules\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "before")
    before = git(repo, "rev-parse", "HEAD")
    lock = make_lock(repo, repo / "claims.yaml", ROOT / "config.yaml",
                     ROOT / "workflow" / "schemas" / "config.schema.yaml")
    (repo / "protocol.lock").write_text(lock_text(lock))
    git(repo, "add", "protocol.lock")
    git(repo, "commit", "-qm", "protocol")
    protocol = git(repo, "rev-parse", "HEAD")
    (repo / "notes.txt").write_text("a later change\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "after")
    after = git(repo, "rev-parse", "HEAD")
    results = tmp_path / "results"
    save_csv(results / "seed_plan.csv", seed_plan_table(CONFIRMATORY, lock["seed_plan"]), provenance({}, None, {}))
    claims = yaml.safe_load((repo / "claims.yaml").read_text())
    inputs = {"claims": repo / "claims.yaml", "seed_plan": results / "seed_plan.csv"}
    records = {name: {"path": str(path), "sha256": sha256_file(path)} for name, path in inputs.items()}
    records["claims"]["path"] = "claims.yaml"  # as the claims rule names it: relative to the project's root
    save_csv(results / "claims.csv", pd.DataFrame({"id": [claims["claims"][0]["id"]], "verdict": ["holds"]}),
             {"inputs": records})
    return repo, str(results / "claims.csv"), claims, {"before": before, "protocol": protocol, "after": after}


def test_a_run_after_the_protocol_commit_is_judged_against_it(repository):
    repo, table, claims, commits = repository
    standing = judge(repo, table, commits["after"], repo / "claims.yaml", claims, repo / "protocol.lock")
    assert standing.confirmatory and standing.protocol == commits["protocol"] and standing.apart == {}
    assert len(standing.locked_not_run) == len(claims["claims"]) - 1


def test_a_run_before_the_protocol_commit_is_refused(repository):
    repo, table, claims, commits = repository
    with pytest.raises(InputError, match="before the protocol commit"):
        judge(repo, table, commits["before"], repo / "claims.yaml", claims, repo / "protocol.lock")


def test_a_lock_changed_since_its_commit_is_refused(repository):
    repo, table, claims, commits = repository
    (repo / "protocol.lock").write_text((repo / "protocol.lock").read_text().replace('"protocol": 1', '"protocol":  1'))
    with pytest.raises(InputError, match="not committed as it is"):
        judge(repo, table, commits["after"], repo / "claims.yaml", claims, repo / "protocol.lock")


def test_analysis_code_changed_after_the_protocol_is_refused(repository):
    repo, table, claims, commits = repository
    (repo / "src" / "rlstudy" / "claims" / "rules.py").write_text("# other rules\n")
    git(repo, "commit", "-qam", "rules changed")
    with pytest.raises(InputError, match="analysis code of its commit differs .* in src/rlstudy/claims/rules.py"):
        judge(repo, table, git(repo, "rev-parse", "HEAD"), repo / "claims.yaml", claims, repo / "protocol.lock")


def test_claims_changed_in_the_checkout_since_the_run_are_read_at_the_run_commit_and_set_apart(repository):
    """The run evaluated claims.yaml of its commit; the checkout has since reworded a claim: its verdict
    is set apart, exploratory, until the next protocol."""
    repo, table, claims, commits = repository
    first = claims["claims"][0]
    changed = {**claims, "claims": [{**first, "statement": first["statement"] + " (reworded)"}, *claims["claims"][1:]]}
    (repo / "claims.yaml").write_text(yaml.safe_dump(changed, sort_keys=False))
    standing = judge(repo, table, commits["after"], repo / "claims.yaml", changed, repo / "protocol.lock")
    assert standing.apart == {first["id"]: "changed after the protocol commit"}
    git(repo, "show", f"{commits['after']}:claims.yaml")  # what it read: the file of the run's commit
