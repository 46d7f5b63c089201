"""make verify at smoke scale: a manifest of a small build, its rebuild in a scratch copy identical, and a
changed kernel reported as different with a non-zero exit, a kernel changed by a later commit not (the
manifest's run commit rebuilds); and the cache of paper.yml (a fresh checkout
over restored outputs and Snakemake's records reruns nothing); and verify's progress streamed as Snakemake
runs a toy Snakefile."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from project_copy import AUTHORS, copy_project, snakemake

from rlstudy.report import rebuild
from rlstudy.report.manifest_schema import load_manifest

pytestmark = pytest.mark.integration

PROFILE = ["--profile", "workflow/profiles/smoke", "--cores", "2"]
# two jobs: a trajectory (bellman/problem/sde.py) and the exact Q on its grid (which imports sde.py too)
TARGETS = ["data/trajectories/ours/evaluation/short/states.npy", "results/exact/evaluation/reward_next/q_exact.npy"]
KERNEL = Path("src/rlstudy/bellman/problem/laws.py")  # the reward, written once
REWARD = "return sin_s + 1.0\n"


def step(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"rlstudy.report.cli.{module}", *args], cwd=cwd,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    project = copy_project(tmp_path_factory.mktemp("verify") / "project")
    done = snakemake(project, *PROFILE, *TARGETS)
    assert done.returncode == 0, done.stderr[-3000:]
    done = step("write_manifest", "--scale", "smoke", "--out", "manifest.json", cwd=project)
    assert done.returncode == 0, done.stderr
    return project


def test_the_manifest_of_the_build(built):
    record = load_manifest(built / "manifest.json")
    assert set(record["artefacts"]) == {f"data/trajectories/ours/evaluation/short/{a}.npy"
                                        for a in ("states", "action_indices", "rewards")} | {
        "results/exact/evaluation/reward_next/q_exact.npy", "results/exact/evaluation/reward_next/refinement.csv"}
    assert record["scale"] == "smoke" and record["seed_block"]["lists"]["seeds"] == [0, 1]


def test_a_rebuild_is_identical_and_a_changed_kernel_is_not(built, tmp_path):
    done = step("verify", "--manifest", "manifest.json", "--targets", TARGETS[0], "--cores", "2",
                "--scratch", str(tmp_path / "same"), cwd=built)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "platform: the manifest's" in done.stdout
    assert "3 identical" in done.stdout and "verify: agrees" in done.stdout
    # progress as it works: what it copies, each job started, the count done
    assert "copied workflow/ (" in done.stdout and "job started: rule trajectory" in done.stdout, done.stdout
    assert "jobs done: 1 of 1" in done.stdout

    kernel = built / KERNEL
    text = kernel.read_text()
    assert text.count(REWARD) == 1
    kernel.write_text(text.replace(REWARD, "return sin_s + 1.0000001\n"))  # within the steps' 1e-6 check
    try:
        done = step("verify", "--manifest", "manifest.json", "--sample", "2", "--max-jobs", "3", "--cores", "2",
                    "--scratch", str(tmp_path / "changed"), cwd=built)
    finally:
        kernel.write_text(text)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "`data/trajectories/ours/evaluation/short/rewards.npy` | trajectory | different" in done.stdout
    assert "`data/trajectories/ours/evaluation/short/states.npy` | trajectory | identical" in done.stdout
    assert "DIFFERS" in done.stdout


def test_nothing_of_the_manifest_and_no_yte_file_runs(built, tmp_path):
    """The manifest's snakemake_args are shown, never used; a YTE config file given by the user is refused by
    the launcher before any of it runs."""
    record = load_manifest(built / "manifest.json")
    record["snakemake_args"] = ["--default-resources", f"pwn=__import__('os').system('touch {tmp_path}/a') or 1"]
    (built / "hostile.json").write_text(json.dumps(record))
    done = step("verify", "--manifest", "hostile.json", "--targets", TARGETS[0], "--cores", "2",
                "--scratch", str(tmp_path / "one"), cwd=built)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / "a").exists() and "(shown only)" in done.stdout
    (tmp_path / "yte.yaml").write_text(f"__use_yte__: true\nx: ?__import__('os').system('touch {tmp_path}/b')\n")
    done = step("verify", "--manifest", "manifest.json", "--targets", TARGETS[0], "--cores", "2",
                "--snakemake-args", f"--configfile {tmp_path}/yte.yaml", "--scratch", str(tmp_path / "two"), cwd=built)
    assert done.returncode == 2, done.stdout + done.stderr
    assert not (tmp_path / "b").exists() and "__use_yte__" in done.stdout + done.stderr


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_a_later_commit_that_moves_a_kernel_does_not_move_what_is_verified(tmp_path):
    """A run built and published in a repository of its own, then a commit that changes its reward: verify
    rebuilds with the code of the manifest's run commit (exported from the repository) and agrees."""
    project = copy_project(tmp_path / "project")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "published")
    published = git(project, "rev-parse", "HEAD")
    own_code = {**os.environ, "PYTHONPATH": str(project / "src")}  # the jobs record this repository's commit
    done = snakemake(project, *PROFILE, TARGETS[0], env=own_code)
    assert done.returncode == 0, done.stderr[-3000:]
    done = subprocess.run([sys.executable, "-m", "rlstudy.report.cli.write_manifest", "--scale", "smoke", "--out",
                           "manifest.json"], cwd=project, capture_output=True, text=True, env=own_code)
    assert done.returncode == 0, done.stderr
    assert load_manifest(project / "manifest.json")["commits_of_artefacts"] == {published: 3}
    kernel = project / KERNEL
    kernel.write_text(kernel.read_text().replace(REWARD, "return sin_s + 1.0000001\n"))
    git(project, "commit", "-qam", "a kernel that moves bits")
    done = step("verify", "--manifest", "manifest.json", "--targets", TARGETS[0], "--cores", "2",
                "--scratch", str(tmp_path / "scratch"), cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"code: commit {published[:12]}, the one the manifest's artefacts were built at" in done.stdout
    assert "3 identical" in done.stdout and "verify: agrees" in done.stdout


def restored(built: Path, target: Path, records: bool) -> Path:
    """A fresh copy of the sources (new mtimes, as a checkout) over the build's outputs copied with
    their mtimes (as actions/cache restores them), with or without Snakemake's records."""
    copy_project(target)
    for source in target.rglob("*"):  # copy_project keeps the worktree's mtimes: a checkout's are now
        os.utime(source)
    for folder in ("data", "results", *([".snakemake/metadata"] if records else [])):
        shutil.copytree(built / folder, target / folder, copy_function=shutil.copy2)
    return target


def test_a_restored_cache_with_snakemakes_records_reruns_nothing(built, tmp_path):
    done = snakemake(restored(built, tmp_path / "with", True), *PROFILE, "-n", *TARGETS)
    assert done.returncode == 0 and "Nothing to be done" in done.stdout + done.stderr, done.stdout
    done = snakemake(restored(built, tmp_path / "without", False), *PROFILE, "-n", *TARGETS)
    assert done.returncode == 0 and "updated input files" in done.stdout, done.stdout


def test_a_rebuilt_runs_row_goes_into_the_published_tables_and_the_verdicts_hold(smoke_project, tmp_path):
    """On the shared smoke run: its manifest, one Q-table seed and one SGD run rebuilt in a scratch copy;
    their rows recomputed, put in place of theirs in the manifest's tables (bit for bit the published
    rows), and the claims evaluated on those tables: no verdict moves."""
    manifest = tmp_path / "manifest.json"
    done = step("write_manifest", "--scale", "smoke", "--snakemake-args", shlex.join(AUTHORS), "--out", str(manifest),
                cwd=smoke_project)
    assert done.returncode == 0, done.stderr
    done = step("verify", "--manifest", str(manifest), "--project", str(smoke_project), "--cores", "2",
                "--snakemake-args", shlex.join(AUTHORS), "--scratch", str(tmp_path / "scratch"),
                "--targets", "results/agents/qtable/seed0/evaluation.csv",
                "results/runs/ours/evaluation/sgd/UR/seed0/q.pt", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "summary: 1 rows of 1 rebuilt runs put in the published table (1 as published)" in done.stdout
    assert "agents: 1 rows of 1 rebuilt runs put in the published table (1 as published)" in done.stdout
    assert "verdicts (the published tables with the rebuilt runs' rows):" in done.stdout
    assert ", 0 moved" in done.stdout and "different" not in done.stdout


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("coretype", [None, "Haswell"])
def test_the_published_density_agrees_here_with_or_without_openblas_coretype(tmp_path, coretype):
    """The stationary density (a BLAS solve) against the committed manifest, on whatever CPU this is: on the
    manifest's platform or under its kernels identical; under another kernel within tolerance, with its size."""
    if not (ROOT / "docs/manifest.json").is_file():
        pytest.skip("no published manifest (make readme writes docs/manifest.json)")
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_CORETYPE"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    done = subprocess.run([sys.executable, "-m", "rlstudy.report.cli.verify", "--manifest", "docs/manifest.json",
                           "--targets", "results/exact/control/stationary_density.npy", "--cores", "1",
                           "--scratch", str(tmp_path / "scratch")], cwd=ROOT, capture_output=True, text=True, env=env)
    line = next((line for line in done.stdout.splitlines() if line.startswith("| `results/exact/control/stat")), "")
    if "this CPU cannot run the manifest's kernels" in done.stdout:  # AVX-512 kernels on an AVX2 CPU
        assert done.returncode == 1 and "| not verifiable here (" in line, done.stdout + done.stderr
        assert "nothing compared: this CPU cannot verify what was asked" in done.stdout
        pytest.skip("this CPU cannot run the manifest's kernels, which alone tell the density's rounding from a defect")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| identical |" in line or "within tolerance" in line and "largest relative difference" in line, line


def test_progress_is_streamed_and_a_refused_target_is_said_at_once(tmp_path, capsys):
    """Each job started and each count done as Snakemake goes; a target it refuses, as it says so."""
    (tmp_path / "Snakefile").write_text(
        'rule a:\n    output: "results/a.txt"\n    log: "logs/a.log"\n    threads: 1\n    shell: "echo a > {output}"\n\n'
        'rule b:\n    input: "results/a.txt"\n    output: "results/b.txt"\n    log: "logs/b.log"\n    threads: 1\n'
        '    shell: "cat {input} > {output}"\n')
    status, _ = rebuild.snakemake(["results/b.txt"], ["--cores", "1"], tmp_path)
    out = capsys.readouterr().out
    assert status == 0 and "job started: rule a -> results/a.txt" in out and "job started: rule b" in out, out
    assert "jobs done: 1 of 2" in out and "jobs done: 2 of 2" in out
    status, _ = rebuild.snakemake(["results/none.txt"], ["--cores", "1"], tmp_path)
    out = capsys.readouterr().out
    assert status != 0 and "  snakemake: MissingRuleException" in out, out
