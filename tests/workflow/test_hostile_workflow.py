"""Hostile configurations and interrupted reruns, through Snakemake itself: no config value runs shell
code (every value of every rule's command is quoted, and free-text names have schema patterns), a
"billion laughs" config file is refused at once, and a rerun killed mid-job is restored by the next
plain `snakemake`."""

import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from project_copy import SHARED, SMOKE, SNAKEMAKE, copy_project, digests, snakemake

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MARKER = "MARKER"
# What a shell would run if it met these unquoted (or inside hand-written single quotes).
SHELL_PAYLOAD = f"a 'b' \"c\" $(touch {MARKER}) `touch {MARKER}2`; touch {MARKER}3 & x|y <z >w"


def shell_fields(text: str) -> list[str]:
    """Every {field} of every rule's shell command in a rules file."""
    commands = re.findall(r"shell:\n((?:\s+\".*\"\n)+)", text)
    return [field for command in commands for field in re.findall(r"\{([^{}]*)\}", command)]


@pytest.mark.parametrize("rules", sorted((ROOT / "workflow" / "rules").glob("*.smk")), ids=lambda p: p.name)
def test_every_value_in_a_rules_command_is_quoted_by_snakemake(rules):
    """{params.x:q}, {input:q}, {wildcards.x:q}, {log:q}: none bare, none inside hand-written quotes."""
    text = rules.read_text()
    fields = shell_fields(text)
    assert "shell:" not in text or fields
    assert [f for f in fields if not f.endswith(":q")] == []
    assert not re.search(r"'\{[^{}]*\}'", "".join(re.findall(r"shell:\n((?:\s+\".*\"\n)+)", text)))


def dry_run_commands(workdir: Path, *args: str) -> list[list[str]]:
    """The shell command of every job of a dry run (snakemake -n -p), split as the shell would."""
    result = snakemake(workdir, "-n", "-p", "--cores", "1", *args)
    assert result.returncode == 0, result.stderr[-3000:]
    commands = re.findall(r"^(?:Shell command: )?((?:SDL_VIDEODRIVER=dummy )?python -m .*)$",
                          result.stdout + result.stderr, re.M)
    assert commands, result.stdout[-2000:]
    return [shlex.split(command) for command in commands]


@pytest.fixture(scope="module")
def hostile_authors_data(tmp_path_factory):
    """A project copy and a folder of the authors' NumPy copy whose name is shell syntax."""
    if not SHARED.is_dir():
        pytest.skip(f"the shared copy {SHARED} is not here")
    workdir = copy_project(tmp_path_factory.mktemp("hostile"))
    folder = workdir / SHELL_PAYLOAD
    folder.mkdir()
    for npz in SHARED.glob("*.npz"):
        shutil.copy(npz, folder / npz.name)  # copies: a link out of the folder is refused
    (workdir / "hostile.yaml").write_text(yaml.safe_dump({"authors_data": str(folder)}))
    return workdir, folder


def test_a_folder_named_with_shell_syntax_arrives_as_one_argument(hostile_authors_data):
    workdir, folder = hostile_authors_data
    commands = dry_run_commands(workdir, "--configfile", "hostile.yaml")
    imports = [c for c in commands if "rlstudy.bellman.cli.import_authors_data" in c]
    assert len(imports) == 3  # the two trajectories and the reference
    for command in imports:
        assert command[command.index("--source") + 1] == str(folder)
    assert not list(workdir.glob(f"{MARKER}*"))


def test_a_job_run_with_it_creates_no_marker_and_records_the_value_used(hostile_authors_data):
    workdir, folder = hostile_authors_data
    target = "data/trajectories/authors/control/short/states.npy"
    result = snakemake(workdir, target, "--cores", "1", "--configfile", "hostile.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    assert not list(workdir.glob(f"{MARKER}*"))
    record = yaml.safe_load((workdir / (target + ".provenance.json")).read_text())
    assert record["parameters"]["source"] == str(folder)


@pytest.mark.parametrize("hazard, named", [
    ("fifo", "x.pt: a FIFO, not a regular file"),
    ("dev-zero", "evil.npz: a link out of the folder (to /dev/zero)"),
    ("link-out", "S_1.pt: a link out of the folder"),
    ("long", "File name too long"),
])
def test_an_authors_folder_that_would_hang_the_parse_is_refused_by_name_at_once(tmp_path, hazard, named):
    """The issue's cases: Snakemake hashed every .pt/.npz of the folder while it started, so a FIFO
    never returned, nor did a link to /dev/zero; a 5000-character folder was an OSError's traceback."""
    workdir = copy_project(tmp_path / "project")
    folder = tmp_path / "authors"
    folder.mkdir()
    if hazard == "fifo":
        os.mkfifo(folder / "x.pt")
    elif hazard == "dev-zero":
        (folder / "evil.npz").symlink_to("/dev/zero")
    elif hazard == "link-out":
        (tmp_path / "S_1.pt").write_bytes(b"elsewhere")
        (folder / "S_1.pt").symlink_to(tmp_path / "S_1.pt")
    else:
        folder = "/" + "a" * 5000
    (workdir / "authors.yaml").write_text(yaml.safe_dump({"authors_data": str(folder)}))
    result = subprocess.run([SNAKEMAKE, "-n", "--cores", "1", "--configfile", "authors.yaml"], cwd=workdir,
                            capture_output=True, text=True, timeout=120)  # a hang fails the test
    shown = result.stdout + result.stderr
    assert result.returncode != 0 and "ConfigError" in shown, shown[-2000:]
    assert [line for line in shown.splitlines() if "config key 'authors_data'" in line and named in line], shown[-2000:]
    assert "Errno" not in shown and "Traceback" not in shown and "OSError" not in shown


@pytest.mark.parametrize("key, value", [
    ("qtable", {"env": f"MountainCar-v0$(touch {MARKER})"}),
    ("mpo", {"env": f"Pendulum-v1`touch {MARKER}`"}),
    ("dqn", {"env": f"CartPole-v1; touch {MARKER}"}),
    ("authors_data", f"none\ntouch {MARKER}"),
    ("offline", {"environments": [f"CartPole-v1'$(touch {MARKER})'"]}),
])
def test_a_config_value_holding_shell_syntax_is_refused_before_any_job(tmp_path, key, value):
    """The issue's case: the marker was created, the job exited 0 and recorded the clean value."""
    workdir = copy_project(tmp_path / "project")
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    merged = {**config[key], **value} if isinstance(value, dict) else value
    (workdir / "more.yaml").write_text(yaml.safe_dump({key: merged}))
    result = snakemake(workdir, "-n", "--cores", "1", "--configfile", "more.yaml")
    shown = result.stdout + result.stderr  # Snakemake prints an error in parsing to either, by version and path
    assert result.returncode != 0 and f"config key '{key}" in shown and "does not match" in shown
    assert not list(workdir.glob(f"{MARKER}*"))


def test_a_billion_laughs_config_file_is_refused_at_once(tmp_path):
    workdir = copy_project(tmp_path / "project")
    (workdir / "laughs.yaml").write_text("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi")))
    start = time.perf_counter()
    result = snakemake(workdir, "-n", "--cores", "1", "--configfile", "laughs.yaml")
    assert result.returncode != 0
    assert "laughs.yaml, line 2: YAML aliases (*name) are not allowed" in result.stdout + result.stderr
    assert time.perf_counter() - start < 60


RUN = "results/runs/ours/control/sgd/DS/seed0"


def test_a_rerun_killed_mid_job_is_restored_by_the_next_plain_run(smoke_project, tmp_path):
    """kill -9 of `snakemake -f` on one run: Snakemake had deleted the run's files, the figures and
    tables still existed, and the next `snakemake` said "Nothing to be done"."""
    copy = tmp_path / "project"
    shutil.copytree(smoke_project, copy, symlinks=True)
    before = digests(copy)
    rerun = subprocess.Popen([SNAKEMAKE, *SMOKE, "-f", f"{RUN}/q.pt"], cwd=copy, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while (copy / RUN / "q.pt").exists() and rerun.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the job is running: its outputs were deleted before it started
    os.killpg(rerun.pid, signal.SIGKILL)
    rerun.wait()
    assert not (copy / RUN / "q.pt").exists(), "killed too late: the job had finished"
    # What docs/reliability.md tells the user to type: unlock (the killed run left its lock), then run.
    assert snakemake(copy, *SMOKE, "--unlock").returncode == 0
    result = snakemake(copy, *SMOKE)
    assert result.returncode == 0, result.stderr[-3000:]
    after = digests(copy)
    assert after == before, sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def test_the_authors_files_rerun_their_import_by_content_not_by_modification_time(tmp_path):
    """A copy of the authors' data mounted afresh (new mtimes, the same bytes) reruns nothing; a file
    whose bytes change reruns its import (the bug: every new mount of ../shared reran the whole
    authors' half of the study, about 130 CPU-minutes at paper scale)."""
    if not SHARED.is_dir():
        pytest.skip(f"the shared copy {SHARED} is not here")
    workdir = copy_project(tmp_path / "project")
    folder = tmp_path / "authors"
    folder.mkdir()
    for npz in SHARED.glob("*.npz"):
        shutil.copy(npz, folder / npz.name)
    (workdir / "authors.yaml").write_text(yaml.safe_dump({"authors_data": str(folder)}))
    target, options = "data/trajectories/authors/control/short/states.npy", ("--cores", "1", "--configfile", "authors.yaml")
    built = snakemake(workdir, target, *options)
    assert built.returncode == 0, built.stderr[-3000:]
    later = time.time() + 3600
    for path in folder.iterdir():
        os.utime(path, (later, later))
    again = snakemake(workdir, target, "-n", *options)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]
    replaced = sorted(folder.glob("control_trajectory*.npz"))[0]
    replaced.write_bytes(replaced.read_bytes() + b"\0")
    changed = snakemake(workdir, target, "-n", *options)
    assert changed.returncode == 0 and "authors_trajectory" in changed.stdout, changed.stderr[-2000:]
