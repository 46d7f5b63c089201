"""Every shell command of the README and the docs pages runs as written in a fresh checkout, dry: at paper scale
(the scale a fresh checkout builds at: config.yaml's confirmatory seed block) every command, and at smoke scale
(a checkout whose results/.scale says smoke) those the text gives for it (the smoke profile, SCALE=smoke, make
smoke, and make rerun, which keeps the checkout's scale). How each is dry-run: tests/doc_commands.py."""

import importlib.util
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from doc_commands import LAUNCH, install_shims, page_commands, replay
from project_copy import ROOT, copy_project

pytestmark = pytest.mark.integration
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHARED = ROOT.parent / "shared"
CACHE_KEY = "rlstudy/documented-commands-passed"
# What a command needs beyond the project, and whether this machine has it.
NEEDS = {"--sdm conda": shutil.which("conda") is not None,
         "profiles/slurm": importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None,
         "../shared": SHARED.is_dir()}


def documented() -> list[tuple[str, str]]:
    """(page, command), each command once (the first page that gives it)."""
    makefile = (ROOT / "Makefile").read_text()
    found: dict[tuple, tuple[str, str]] = {}
    for page in PAGES:
        for command in page_commands(page.read_text(), makefile):
            found.setdefault(tuple(shlex.split(command, comments=True)), (page.name, command))
    return list(found.values())


def at_smoke_scale(command: str) -> bool:
    return "smoke" in command or command.startswith(("make rerun", "printf"))


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A fresh checkout: the project's files, the venv it was installed into, ../shared beside it."""
    base = tmp_path_factory.mktemp("fresh")
    project = copy_project(base / "project")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "benchmarks", project / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    (project / ".venv").symlink_to(ROOT / ".venv")
    if SHARED.is_dir():
        (base / "shared").symlink_to(SHARED)
    return project, install_shims(base / "shims", project)


def run_all(project: Path, env: dict, commands: list[tuple[str, str]], cache) -> list[str]:
    """Each command in bash through the shims; then the Snakemake dry runs they recorded, but those that passed
    before on the same files (pytest's cache). The failures."""
    log = project / "snakemake-calls.jsonl"
    log.unlink(missing_ok=True)
    log.touch()
    failed, skipped = [], []
    for page, command in commands:
        missing = [need for need, present in NEEDS.items() if need in command and not present]
        if missing:
            skipped.append(f"{page}: {command} (needs {', '.join(missing)})")
            continue
        result = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True,
                                env={**env, "DOC_COMMANDS_LOG": str(log), "DOC_COMMAND": f"{page}: {command}"})
        if result.returncode != 0:
            failed.append(f"{page}: {command}\n{result.stderr[-1500:]}")
    if skipped:
        print("skipped:\n" + "\n".join(skipped))
    passed = set(cache.get(CACHE_KEY, []))
    failed += replay(log, project, passed)
    cache.set(CACHE_KEY, sorted(passed))
    return failed


def test_the_pages_have_commands_and_hide_none():
    commands = documented()
    assert len(commands) > 30 and any(c.startswith("make rerun") for _, c in commands)
    for page in PAGES:  # a shell command in a block not tagged sh would escape this test
        for block in page.read_text().split("```\n")[1::2]:
            first = block.lstrip().split(" ", 1)[0]
            assert first not in ("make", "snakemake"), f"{page.name}: a shell block without ```sh: {block[:80]}"


def test_every_command_dry_runs_at_paper_scale(checkout, request):
    project, env = checkout
    (project / "results" / ".scale").unlink(missing_ok=True)
    failed = run_all(project, env, documented(), request.config.cache)
    assert not failed, "\n\n".join(failed)


def test_the_smoke_commands_dry_run_in_a_smoke_checkout(checkout, request):
    project, env = checkout
    (project / "results").mkdir(exist_ok=True)
    (project / "results" / ".scale").write_text("smoke\n")
    commands = [(page, command) for page, command in documented() if at_smoke_scale(command)]
    assert any("first-seed" in command for _, command in commands)
    failed = run_all(project, env, commands, request.config.cache)
    assert not failed, "\n\n".join(failed)


@pytest.mark.parametrize("given", [["--config", "seeds=[0,1,2]"], ["--configfile", "more-seeds.yaml"]])
def test_seeds_of_ones_own_under_the_confirmatory_block_are_refused_saying_how(checkout, given):
    """They were refused with a ConfigError on the block's counts, or (a more.yaml) replaced silently."""
    project, _ = checkout
    (project / "results" / ".scale").unlink(missing_ok=True)
    (project / "more-seeds.yaml").write_text("cbo:\n  settings:\n    cbo:\n      seeds: [0, 1, 2]\n")
    result = subprocess.run([*LAUNCH, "-n", "--cores", "1", *given], cwd=project, capture_output=True, text=True)
    said = result.stdout + result.stderr
    assert result.returncode != 0
    assert "seeds [0, 1, 2] given, but this run uses the confirmatory seed block" in said
    assert "--config seed_block=exploratory" in said
