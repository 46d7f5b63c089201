"""make verify under hostile input: a manifest is data (every field checked, nothing of it on a command line
or a path), verify fails when it could not compare what it was asked, the platform is what the libraries
run (not the environment), files are opened as regular files, and verify writes only in its scratch."""

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hostile import deadline, run_step
from rlstudy.core.config import ConfigError, validate_config
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import write_artefact
from rlstudy.report import rebuild, verify
from rlstudy.report.manifest import dumps, manifest
from rlstudy.report.manifest_schema import load_manifest, problems

ROOT = Path(__file__).resolve().parents[3]
STATES = "data/trajectories/ours/control/short/states.npy"


@pytest.fixture
def project(tmp_path):
    """A finished tiny run and its manifest, in tmp_path/project (verify's scratch goes beside it)."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "config.yaml").write_text("seed: 7\nseeds: [0, 1]\n")
    record = {"git_commit": "a" * 40, "parameters": {}}
    write_artefact(folder / STATES, b"states", record)
    write_artefact(folder / "results/reference/error_exact.csv", b"task,error\ncontrol,0.1234\n", record)
    write_artefact(folder / "results/claims.csv", b"id,verdict,evidence\na,holds,p=0.01\n", record)
    (folder / "manifest.json").write_text(dumps(manifest(folder, "paper", [])))
    return folder


def edited(project: Path, change) -> Path:
    record = json.loads((project / "manifest.json").read_text())
    change(record)
    path = project / "edited.json"
    path.write_text(json.dumps(record))
    return path


def verify_cli(project: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    """`python -m rlstudy.report.cli.verify args` in the project, in a new process: for an environment
    that must be there as the libraries load (the tests without one use the verify fixture)."""
    return subprocess.run([sys.executable, "-m", "rlstudy.report.cli.verify", *args], cwd=project,
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def verify_run(capsys, monkeypatch):
    """verify in this process, in the project, as `python -m rlstudy.report.cli.verify args` runs it (its
    exit status, its streams): what verify_cli returns, without a new interpreter each call."""
    def call(project: Path, *args: str) -> subprocess.CompletedProcess:
        monkeypatch.chdir(project)
        return subprocess.CompletedProcess(args, *run_step(capsys, monkeypatch, "report.cli.verify", *args))
    return call


def test_the_manifest_of_a_run_is_valid_and_the_published_one_too(project):
    assert load_manifest(project / "manifest.json")["commit"] == "a" * 40  # the run's commit, not the checkout's
    assert load_manifest(ROOT / "docs/manifest.json")["format"] == 1


@pytest.mark.parametrize("change, field", [
    (lambda r: r.pop("platform"), "field 'platform' is missing"),
    (lambda r: r["platform"]["rounding"].pop("openblas_kernels"), "field 'platform.rounding.openblas_kernels' is missing"),
    (lambda r: r["artefacts"].update({"--default-resources=pwn=1": r["artefacts"][STATES]}), "field 'artefacts'"),
    (lambda r: r["artefacts"].update({"results/-x": r["artefacts"][STATES]}), "field 'artefacts'"),
    (lambda r: r["artefacts"].update({"results/../../x": r["artefacts"][STATES]}), "field 'artefacts'"),
    (lambda r: r["artefacts"].update({"/etc/x": r["artefacts"][STATES]}), "field 'artefacts'"),
    (lambda r: r["artefacts"].update({"src/x.py": r["artefacts"][STATES]}), "field 'artefacts'"),
    (lambda r: r["artefacts"][STATES].update({"sha256": "x"}), f"field 'artefacts.{STATES}.sha256'"),
    (lambda r: r["artefacts"][STATES].update({"size": 6.0}), f"field 'artefacts.{STATES}.size'"),
    (lambda r: r["artefacts"][STATES].update({"kind": "code"}), f"field 'artefacts.{STATES}.kind'"),
    (lambda r: r["tables"].update({"../../../x": r["tables"]["claims"]}), "field 'tables'"),
    (lambda r: r["tables"].update({"/abs/path/x": r["tables"]["claims"]}), "field 'tables'"),
    (lambda r: r["tables"]["claims"].update({"path": "../x.csv"}), "field 'tables.claims.path'"),
    (lambda r: r.update({"scale": "paper --forceall"}), "field 'scale'"),
    (lambda r: r.update({"seed": 1e30}), "field 'seed'"),
    (lambda r: r["counts"].update({"artefacts": 3.0}), "field 'counts.artefacts'"),
    (lambda r: r.update({"snakemake_args": "--default-resources pwn=1"}), "field 'snakemake_args'"),
    (lambda r: r["verdicts"].update({"a": "rm -rf"}), "field 'verdicts.a'"),
])
def test_a_bad_field_is_one_line_naming_it(project, change, field):
    with pytest.raises(InputError) as err:
        load_manifest(edited(project, change))
    assert field in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_a_table_row_longer_than_its_columns_is_refused(project):
    record = json.loads((project / "manifest.json").read_text())
    record["tables"]["claims"]["rows"][0].append("extra")
    assert problems(record) == ["field 'tables.claims.rows': a row is not as long as the columns"]


@pytest.mark.parametrize("odd", ["fifo", "link to /dev/zero"])
def test_a_fifo_or_endless_manifest_is_refused_at_once(project, odd):
    path = project / "odd.json"
    if odd == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with deadline(10), pytest.raises(InputError, match="a FIFO, not a regular file|a link, not a regular file"):
        load_manifest(path)


def test_the_kernels_named_by_a_manifest_reach_the_environment_only_as_names():
    from rlstudy.report.platform import emulation_environment

    assert emulation_environment({"openblas_kernels": "Haswell", "torch_cpu_capability": "AVX512"}) == {
        "OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "avx512"}
    with pytest.raises(InputError, match="platform.rounding.openblas_kernels"):
        emulation_environment({"openblas_kernels": "Haswell; touch x", "torch_cpu_capability": "AVX512"})


def test_the_manifests_snakemake_options_never_reach_snakemake(project, verify_run):
    """The options are the checkout's profile and the user's own; the manifest's only their scale."""
    assert rebuild.options("paper", "2", ["--config", "x=1"]) == ["--cores", "2", "--config", "x=1"]
    assert rebuild.options("smoke", "2", []) == ["--profile", "workflow/profiles/smoke", "--cores", "2"]
    with pytest.raises(InputError):
        rebuild.options("paper --forceall", "2", [])
    with pytest.raises(InputError, match="never an option"):
        rebuild.snakemake(["--default-resources=pwn=1"], [], project)
    hostile = edited(project, lambda r: r.update(
        {"snakemake_args": ["--default-resources", "pwn=__import__('os').system('touch marker') or 1"]}))
    done = verify_run(project, "--manifest", str(hostile), "--run", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(shown only)" in done.stdout and not (project / "marker").exists()


def test_verify_fails_when_it_could_not_compare(project, tmp_path, verify_run):
    empty = tmp_path / "empty"
    empty.mkdir()
    done = verify_run(project, "--manifest", "manifest.json", "--run", str(empty))
    assert done.returncode == 1 and "nothing compared" in done.stdout and "3 missing" in done.stdout, done.stdout
    (project / "results/claims.csv").unlink()
    done = verify_run(project, "--manifest", "manifest.json", "--run", ".")
    assert done.returncode == 1, done.stdout
    assert "| `results/claims.csv` | table | missing" in done.stdout and "1 missing" in done.stdout


def test_a_target_not_in_the_manifest_is_refused_at_once_and_nothing_is_built(project, verify_run):
    done = verify_run(project, "--manifest", "manifest.json", "--targets", "results/other.csv", STATES)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "target 'results/other.csv': refused, not an artefact of the manifest" in done.stdout
    assert "1 of 2 targets not in the manifest: nothing rebuilt" in done.stdout


def test_verify_writes_only_in_its_scratch(project, verify_run):
    """Its working tables under fixed names in a scratch folder beside the project, removed at the end."""
    before = sorted(p.relative_to(project.parent) for p in project.parent.rglob("*"))
    done = verify_run(project, "--manifest", "manifest.json", "--run", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.relative_to(project.parent) for p in project.parent.rglob("*")) == before
    done = verify_run(project, "--manifest", "manifest.json", "--run", ".", "--report", "report.md")
    assert (project / "report.md").read_text().endswith("verify: agrees with the manifest\n")


def test_an_environment_variable_naming_the_kernel_already_picked_leaves_a_defect_a_defect(project):
    """OPENBLAS_CORETYPE set to what OpenBLAS picks here changes no kernel: the same platform, and a
    changed artefact is different (status 1), never chaotic."""
    from rlstudy.core.process import openblas_kernels

    picked = openblas_kernels()
    (project / STATES).write_bytes(b"statez")
    env = {**os.environ, "OPENBLAS_CORETYPE": picked}
    done = verify_cli(project, "--manifest", "manifest.json", "--run", ".", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "platform: the manifest's" in done.stdout
    assert "different (the manifest's platform" in done.stdout and "chaotic" not in done.stdout


def test_a_kind_measured_to_move_is_within_tolerance_with_its_size_only_when_the_manifests_kernels_repeat_it(tmp_path):
    """The stationary density: rebuilt here under the manifest's kernels it must be the manifest's bytes,
    and this machine's differ from it by no more than the kernels' rounding."""
    assert verify.measured_rules()["density"] == "rounding" and verify.measured_rules()["trajectory"] == "exact"
    path = "results/exact/control/stationary_density.npy"
    density = np.linspace(0.1, 1.0, 50)

    def saved(name, array):
        target = tmp_path / name / path
        target.parent.mkdir(parents=True)
        np.save(target, array)
        return target

    published = saved("published", density)
    record = {"artefacts": {path: {"sha256": hashlib.sha256(published.read_bytes()).hexdigest(), "size": 1,
                                   "kind": "exact"}}, "tables": {}}
    here = saved("here", density * (1 + 1e-13))
    assert verify.needs_published_kernels(path, here, record, same_platform=False)
    result, fails = verify.judge(path, here, record, False, published)
    assert not fails and result.startswith("within tolerance") and "largest relative difference 1e-13" in result
    far = saved("far", density * (1 + 1e-6))
    assert verify.judge(path, far, record, False, published)[1] is True
    assert verify.judge(path, here, record, False, far)[0].startswith("different (rebuilt under the manifest's")
    assert verify.judge(path, here, record, False, None)[1] is True  # not emulated: not excused
    assert verify.judge(path, here, record, True, published)[1] is True  # the same platform: every bit
    unrunnable = "this CPU cannot run the manifest's kernels {...}: a product under them failed (killed by SIGILL)"
    result, fails = verify.judge(path, here, record, False, None, unrunnable)  # an AVX2 CPU, AVX-512 kernels
    assert not fails and result.startswith(verify.UNVERIFIABLE + " (this CPU cannot run")
    assert verify.judge(path, far, record, True, None, unrunnable)[1] is True  # the same platform is never excused


def test_kernels_this_cpu_cannot_run_are_found_by_a_probe_and_nothing_is_rebuilt_under_them(monkeypatch, tmp_path):
    """OpenBLAS runs the kernels OPENBLAS_CORETYPE names, and its AVX-512 ones die of an illegal instruction
    on an AVX2 CPU (2026-11-29: every verify of the density failed so on the AMD EPYC)."""
    from rlstudy.report import platform
    from rlstudy.report.cli import verify as verify_cli

    assert platform.cannot_emulate({}) is None  # this machine's own kernels run
    monkeypatch.setattr(platform, "EMULATION_PROBE", "import os, signal\nos.kill(os.getpid(), signal.SIGILL)\n")
    assert platform.cannot_emulate({}) == "a matrix product under them failed (killed by SIGILL)"
    monkeypatch.setattr(platform, "EMULATION_PROBE", "raise SystemExit(3)\n")
    assert platform.cannot_emulate({}) == "a matrix product under them failed (exit status 3)"
    monkeypatch.setattr(platform, "EMULATION_PROBE", "import time\ntime.sleep(60)\n")
    monkeypatch.setattr(platform, "EMULATION_TIMEOUT_S", 1)
    assert platform.cannot_emulate({}) == "a matrix product under them had not ended after 1 s"
    monkeypatch.setattr(verify_cli, "cannot_emulate", lambda environment: "a matrix product under them failed")
    monkeypatch.setattr(rebuild, "build", lambda *args: pytest.fail("built under kernels this CPU cannot run"))
    record = {"platform": {"rounding": {"openblas_kernels": "SkylakeX", "torch_cpu_capability": "AVX512"}}}
    here = {"openblas_kernels": "Haswell", "torch_cpu_capability": "AVX2"}
    scratch, why = verify_cli.under_published_kernels(record, here, ["a.npy"], tmp_path, [], tmp_path / "s", None)
    assert scratch is None and why.startswith("this CPU cannot run the manifest's kernels") and "SkylakeX" in why


@pytest.mark.parametrize("patch, key", [
    ({"confirmatory_block": {"start": 10000.0, "counts": {"seeds.control": 3}}}, "confirmatory_block.start"),
    ({"confirmatory_block": {"start": 10**30, "counts": {"seeds.control": 3}}}, "confirmatory_block.start"),
    ({"confirmatory_block": {"start": 10, "counts": {"seeds.control": 3.0}}}, "confirmatory_block.counts.seeds.control"),
    ({"seed": 2**63}, "seed"),
    ({"seed": 7.0}, "seed"),
])
def test_seeds_starts_and_counts_are_integers_within_int64(patch, key):
    import yaml

    config = {**copy.deepcopy(yaml.safe_load((ROOT / "config.yaml").read_text())), **patch}
    with pytest.raises(ConfigError, match=f"config key '{key.replace('.', '[.]')}'"):
        validate_config(config, ROOT / "workflow/schemas/config.schema.yaml")
