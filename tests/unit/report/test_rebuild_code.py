"""Which code verify rebuilds with: a commit's files exported from the checkout's repository (as that commit
has them, not as the worktree or a later commit does), the checkout's where the repository lacks the
manifest's run commit, and an export refused, naming the commit, where it is not a workflow's or would
unpack outside the scratch folder."""

import os
import subprocess
from pathlib import Path

import pytest

from rlstudy.core.errors import InputError
from rlstudy.report import rebuild
from rlstudy.report.cli.verify import rebuild_commit


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    """A workflow's repository: the first commit has no protocol.lock; src/kernel.py changes at the second
    commit and again in the worktree."""
    folder = tmp_path / "project"
    for name, text in {"Snakefile": "rule all:\n", "config.yaml": "seed: 1\n", "workflow/rules/a.smk": "# a\n",
                       "src/kernel.py": "RATE = 1\n", "results/out.csv": "an output\n"}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    git(folder, "init", "-q")
    first = commit_all(folder, "first")
    (folder / "src/kernel.py").write_text("RATE = 2\n")
    (folder / "protocol.lock").write_text("{}\n")
    second = commit_all(folder, "second")
    (folder / "src/kernel.py").write_text("RATE = 3\n")
    return folder, first, second


def manifest_of(commit: str) -> dict:
    return {"commits_of_artefacts": {commit: 5, "none": 9}}


def test_a_commits_files_are_exported_as_it_has_them(repo, tmp_path):
    folder, first, second = repo
    for commit, rate, lock in ((first, "1", False), (second, "2", True)):
        scratch = tmp_path / f"scratch-{rate}"
        scratch.mkdir()
        rebuild.copy_project(folder, scratch, commit)
        assert (scratch / "src/kernel.py").read_text() == f"RATE = {rate}\n"
        assert (scratch / "workflow/rules/a.smk").is_file() and (scratch / "protocol.lock").is_file() == lock
        assert not (scratch / "results").exists()  # code only, never outputs


@pytest.mark.parametrize("commit", ["f" * 40, "a" * 40 + "+dirty", "none", "unknown (not a git checkout)",
                                    "--output=/tmp/x", "HEAD"])
def test_a_commit_the_repository_lacks_or_not_a_full_hash_is_refused(repo, tmp_path, commit):
    folder, _, _ = repo
    assert not rebuild.has_commit(folder, commit)
    with pytest.raises(InputError, match="not a commit of the repository"):
        rebuild.export_commit(folder, commit, tmp_path)


def test_a_commit_of_another_project_and_a_link_outside_are_refused(repo, tmp_path):
    folder, _, _ = repo
    (folder / "Snakefile").unlink()
    not_workflow = commit_all(folder, "no Snakefile")
    with pytest.raises(InputError, match="no Snakefile"):
        rebuild.export_commit(folder, not_workflow, tmp_path)
    (folder / "Snakefile").write_text("rule all:\n")
    os.symlink("/etc/passwd", folder / "src/escape")
    linked = commit_all(folder, "a link out of the tree")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(InputError, match="cannot be unpacked as data"):
        rebuild.export_commit(folder, linked, scratch)


def test_verify_chooses_the_published_commit_where_the_repository_has_it(repo, tmp_path, capsys):
    folder, first, _ = repo
    assert rebuild_commit(manifest_of(first), folder, "auto") == first
    assert rebuild_commit(manifest_of(first), folder, "published") == first
    assert rebuild_commit(manifest_of(first), folder, "checkout") is None
    assert "code: commit " + first[:12] in capsys.readouterr().out
    for record in (manifest_of("e" * 40), manifest_of(first + "+dirty"), {"commits_of_artefacts": {"none": 3}}):
        assert rebuild_commit(record, folder, "auto") is None
        assert "code: the checkout's files: the manifest's run commit" in capsys.readouterr().out
        with pytest.raises(InputError, match="--code published: the manifest's run commit"):
            rebuild_commit(record, folder, "published")
    assert rebuild_commit(manifest_of(first), tmp_path / "not-a-repository", "auto") is None
