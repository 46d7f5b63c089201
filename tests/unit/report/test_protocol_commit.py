"""The protocol commit: the commit that last changed protocol.lock, committed before the confirmatory
run. Judged in a git repository of its own (a copy of the project's source, claims and config): the lock
committed after the run, or changed since its commit, is refused; a run after it is judged against it,
refused where a file of the verdict step's import closure or a config value a claim reads changed since,
naming it; a run of an earlier protocol stays judged against that protocol's lock."""

import hashlib
import json
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
from rlstudy.report.lock import make_lock
from rlstudy.report.protocol import judge, lock_text, seed_plan_table

ROOT = Path(__file__).resolve().parents[3]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def copy_project(repo: Path) -> None:
    """The project's source, claims, config, spent blocks and the claims rule and schemas: what a lock reads."""
    shutil.copytree(ROOT / "src" / "rlstudy", repo / "src" / "rlstudy",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    (repo / "workflow" / "rules").mkdir(parents=True)
    shutil.copytree(ROOT / "workflow" / "schemas", repo / "workflow" / "schemas")
    shutil.copy(ROOT / "workflow" / "rules" / "claims.smk", repo / "workflow" / "rules" / "claims.smk")
    for name in ("claims.yaml", "config.yaml", "spent_blocks.yaml"):
        shutil.copy(ROOT / name, repo / name)


def write_run(results: Path, repo: Path, plan: dict) -> str:
    """A confirmatory run's claims.csv (one verdict) naming its claims file and seed plan as inputs."""
    save_csv(results / "seed_plan.csv", seed_plan_table(CONFIRMATORY, plan), provenance({}, None, {}))
    claims = yaml.safe_load((repo / "claims.yaml").read_text())
    inputs = {"claims": repo / "claims.yaml", "seed_plan": results / "seed_plan.csv"}
    records = {name: {"path": str(path), "sha256": sha256_file(path)} for name, path in inputs.items()}
    records["claims"]["path"] = "claims.yaml"  # as the claims rule names it: relative to the project's root
    save_csv(results / "claims.csv", pd.DataFrame({"id": [claims["claims"][0]["id"]], "verdict": ["holds"]}),
             {"inputs": records})
    return str(results / "claims.csv")


def lock_of(repo: Path) -> dict:
    return make_lock(repo, repo / "claims.yaml", repo / "config.yaml", repo / "workflow" / "schemas" / "config.schema.yaml")


@pytest.fixture
def repository(tmp_path):
    """A repository with the project's source and claims: commit `before`, then the protocol, then `after`."""
    repo = tmp_path / "repo"
    copy_project(repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "before")
    before = git(repo, "rev-parse", "HEAD")
    lock = lock_of(repo)
    (repo / "protocol.lock").write_text(lock_text(lock))
    git(repo, "add", "protocol.lock")
    git(repo, "commit", "-qm", "protocol")
    protocol = git(repo, "rev-parse", "HEAD")
    (repo / "notes.txt").write_text("a later change\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "after")
    after = git(repo, "rev-parse", "HEAD")
    table = write_run(tmp_path / "results", repo, lock["seed_plan"])
    claims = yaml.safe_load((repo / "claims.yaml").read_text())
    return repo, table, claims, {"before": before, "protocol": protocol, "after": after}


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
    (repo / "protocol.lock").write_text((repo / "protocol.lock").read_text().replace('"protocol": 2', '"protocol":  2'))
    with pytest.raises(InputError, match="not committed as it is"):
        judge(repo, table, commits["after"], repo / "claims.yaml", claims, repo / "protocol.lock")


@pytest.mark.parametrize("path", ["src/rlstudy/claims/rules.py", "src/rlstudy/core/loaders.py", "src/rlstudy/core/config.py",
                                  "src/rlstudy/bellman/problem/sde.py", "workflow/rules/claims.smk"])
def test_a_file_of_the_verdict_steps_import_closure_changed_after_the_protocol_is_refused_naming_it(repository, path):
    repo, table, claims, commits = repository
    with (repo / path).open("a") as edited:
        edited.write("\n# an edit after the protocol\n")
    git(repo, "commit", "-qam", "an edit")
    with pytest.raises(InputError, match=f"analysis code of its commit differs .* in {path}"):
        judge(repo, table, git(repo, "rev-parse", "HEAD"), repo / "claims.yaml", claims, repo / "protocol.lock")


@pytest.mark.parametrize("old, new, key", [("solved_return: 475", "solved_return: 400", "dqn.solved_return"),
                                           ("converged_below: 0.5", "converged_below: 0.6", "summary.converged_below"),
                                           ("  evaluation_episodes: 300  #", "  evaluation_episodes: 3  #",
                                            "dqn.evaluation_episodes")])
def test_a_config_value_a_claim_reads_changed_after_the_protocol_is_refused_naming_it(repository, old, new, key):
    repo, table, claims, commits = repository
    config = repo / "config.yaml"
    assert old in config.read_text()
    config.write_text(config.read_text().replace(old, new, 1))
    git(repo, "commit", "-qam", "a bar moved")
    with pytest.raises(InputError, match=f"a config value the claims read differs .*: {key} "):
        judge(repo, table, git(repo, "rev-parse", "HEAD"), repo / "claims.yaml", claims, repo / "protocol.lock")


def test_a_run_of_an_earlier_protocol_stays_judged_against_its_lock(repository, tmp_path):
    """A second protocol after the first one's run: the run is still judged by the lock of its commit
    (its seeds, its code), and a run of the second protocol by the second lock."""
    repo, table, claims, commits = repository
    (repo / "src" / "rlstudy" / "claims" / "rules.py").write_text("# the second protocol's rules\n")
    git(repo, "commit", "-qam", "rules of the second protocol")
    second = lock_of(repo)
    (repo / "protocol.lock").write_text(lock_text(second))
    git(repo, "commit", "-qam", "protocol 2")
    standing = judge(repo, table, commits["after"], repo / "claims.yaml", claims, repo / "protocol.lock")
    assert standing.confirmatory and standing.protocol == commits["protocol"]
    second_run = write_run(tmp_path / "second", repo, second["seed_plan"])
    head = git(repo, "rev-parse", "HEAD")
    assert judge(repo, second_run, head, repo / "claims.yaml", claims, repo / "protocol.lock").protocol == head
    with pytest.raises(InputError, match="its seed plan differs from the protocol's"):
        judge(repo, table, head, repo / "claims.yaml", claims, repo / "protocol.lock")


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


PROTOCOL_1 = "2a123da6a4000e10ea7f2d41b8a4143db97bd4f3"  # the first protocol commit (spent_blocks.yaml)


@pytest.mark.skipif(subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{PROTOCOL_1}^{{commit}}"],
                                   capture_output=True).returncode != 0, reason="protocol 1 not in this history")
def test_protocol_1s_publication_stays_judged_against_its_own_lock_after_a_second_protocol(tmp_path):
    """The published run of protocol 1 (its seed plan, its claims, made at its protocol commit) is judged
    against the version-1 lock of that commit, in this repository's own history and after a second lock
    is committed on top of it."""
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--shared", str(ROOT), str(repo))
    git(repo, "checkout", "-q", git(ROOT, "rev-parse", "HEAD"))
    first = json.loads(git(repo, "show", f"{PROTOCOL_1}:protocol.lock"))
    assert first["protocol"] == 1
    results = tmp_path / "results"
    save_csv(results / "seed_plan.csv", seed_plan_table(CONFIRMATORY, first["seed_plan"]), provenance({}, None, {}))
    claims_text = subprocess.run(["git", "-C", str(repo), "show", f"{PROTOCOL_1}:claims.yaml"], capture_output=True,
                                 check=True).stdout
    records = {"claims": {"path": "claims.yaml", "sha256": hashlib.sha256(claims_text).hexdigest()},
               "seed_plan": {"path": str(results / "seed_plan.csv"), "sha256": sha256_file(results / "seed_plan.csv")}}
    declared = yaml.safe_load(claims_text)
    save_csv(results / "claims.csv", pd.DataFrame({"id": [declared["claims"][0]["id"]], "verdict": ["holds"]}),
             {"inputs": records})
    table = str(results / "claims.csv")
    (repo / "claims.yaml").write_bytes(claims_text)  # the checkout's claims as protocol 1 wrote them
    standing = judge(repo, table, PROTOCOL_1, repo / "claims.yaml", declared, repo / "protocol.lock", any_results=True)
    assert standing.protocol == PROTOCOL_1 and standing.apart == {}
    (repo / "protocol.lock").write_text(lock_text(lock_of(repo)))
    git(repo, "commit", "-qam", "protocol 2")
    standing = judge(repo, table, PROTOCOL_1, repo / "claims.yaml", declared, repo / "protocol.lock", any_results=True)
    assert standing.protocol == PROTOCOL_1 and standing.apart == {}


def write_looks(root: Path, lists: dict[str, list[int]], looks: int, stops: dict[str, int]) -> dict[str, int]:
    """The design's first `looks` looks under root/results/looks, each list continuing to its next count
    but at its look in `stops` or its last count, where it stops for good; the counts the looks ended at."""
    counts, stopped = {key: counts[0] for key, counts in lists.items()}, set()
    for look in range(1, looks + 1):
        rows = ["list,look,count,status,next_count"]
        for key, design in sorted(lists.items()):
            if key in stopped or stops.get(key) == look or counts[key] == design[-1]:
                stopped.add(key)
                rows.append(f"{key},{look},{counts[key]},stop,{counts[key]}")
            else:
                following = design[design.index(counts[key]) + 1]
                rows.append(f"{key},{look},{counts[key]},continue,{following}")
                counts[key] = following
        folder = root / "results" / "looks" / f"look{look}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "lists.csv").write_text("\n".join(rows) + "\n")
    return counts


def test_a_run_of_the_design_is_judged_against_the_lists_its_looks_ran(repository, tmp_path):
    """Under a group-sequential design the run ran each list's seeds up to where its looks stopped it: that
    plan is the protocol's (the lock's whole plan is refused, naming a list the looks cut); looks that have
    not finished are refused (the bug: the whole plan was asked of every run, so a list stopped early made
    the publication refuse)."""
    repo, _, claims, _ = repository
    shipped = json.loads((ROOT / "protocol.lock").read_text())["design"]  # the shipped design, for this config
    lock = make_lock(repo, repo / "claims.yaml", repo / "config.yaml", repo / "workflow" / "schemas" / "config.schema.yaml",
                     design=lambda claims, config: shipped)
    (repo / "protocol.lock").write_text(lock_text(lock))
    git(repo, "commit", "-qam", "a protocol with a design")
    head = git(repo, "rev-parse", "HEAD")
    lists = {key: item["looks"] for key, item in lock["design"]["lists"].items()}
    early = sorted(lists)[0]
    counts = write_looks(repo, lists, len(lists[early]), {early: 2})
    assert counts[early] == lists[early][1] < lists[early][-1]
    ran = {key: seeds[:counts[key]] if key in counts else seeds for key, seeds in lock["seed_plan"].items()}
    table = write_run(tmp_path / "ran", repo, ran)
    standing = judge(repo, table, head, repo / "claims.yaml", claims, repo / "protocol.lock")
    assert standing.confirmatory and standing.protocol == head
    whole = write_run(tmp_path / "whole", repo, lock["seed_plan"])
    with pytest.raises(InputError, match=f"its seed plan differs from the protocol's .* at \\['{early}'\\]"):
        judge(repo, whole, head, repo / "claims.yaml", claims, repo / "protocol.lock")
    shutil.rmtree(repo / "results" / "looks")
    write_looks(repo, lists, 2, {})
    with pytest.raises(InputError, match="the design's looks have not finished"):
        judge(repo, table, head, repo / "claims.yaml", claims, repo / "protocol.lock")
