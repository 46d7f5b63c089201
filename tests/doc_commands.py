"""The shell commands of the README and docs pages, and the dry run of each
(tests/workflow/test_documented_commands.py).

A command is a line of a ```sh block (a trailing backslash continues it) or an inline `make ...` that names only
Makefile targets and VAR=value words. Each runs in bash, in a copy of the project, with `make`, `snakemake`,
`python` and `pip` on the PATH as shims (this file run as a script) that dry-run them:

- make: `make -n` with the arguments (the recipe as it would run, every variable resolved), then every Snakemake
  call of the recipe through the project's launcher with -n; the targets of a `verify` likewise. `make -s
  first-seed` runs as it is (a command substitution of the docs asks it);
- snakemake: the launcher with -n.

The Snakemake dry runs are the slow part (seconds each, for the DAG of thousands of jobs), so they are recorded
(DOC_COMMANDS_LOG) and run once per set of options with every target of the set (`replay`); a call that names a
config file runs at once, while the file is the one its command wrote;
- python: `python -m module ...` runs `python -m module --help`; `python file.py` compiles the file;
- pip: `pip install -e '.[extra]'` checks that pyproject.toml has the extra.
"""

from __future__ import annotations

import hashlib
import json
import os
import py_compile
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

FENCE = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
INLINE_MAKE = re.compile(r"`(make [^`]+)`")
ASSIGNMENT = re.compile(r"[A-Z_]+=(?!\.\.\.)\S*")  # not a placeholder: TARGET=...
LAUNCH = [sys.executable, "-m", "rlstudy.runtime.launch"]
SHIMS = ("make", "snakemake", "python", "pip")


def makefile_targets(makefile: str) -> set[str]:
    return set(re.findall(r"^([A-Za-z][A-Za-z0-9_-]*):(?!=)", makefile, re.M))


def block_commands(page: str) -> list[str]:
    commands = []
    for block in FENCE.findall(page):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(line)
    return commands


def inline_make_commands(page: str, targets: set[str]) -> list[str]:
    """The inline `make ...` of the page's prose that name only targets and VAR=value (not `make TARGET ...`)."""
    found = []
    for span in INLINE_MAKE.findall(page):
        command = " ".join(span.split())
        try:
            words = shlex.split(command)[1:]
        except ValueError:
            continue
        if words and all(word in targets or ASSIGNMENT.fullmatch(word) for word in words) and \
                any(word in targets for word in words):
            found.append(command)
    return found


def page_commands(page: str, makefile: str) -> list[str]:
    return list(dict.fromkeys([*block_commands(page), *inline_make_commands(page, makefile_targets(makefile))]))


def smoke_checkout() -> bool:
    try:
        return Path("results/.scale").read_text().strip() == "smoke"
    except FileNotFoundError:
        return False


def run(command: list[str]) -> int:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"$ {shlex.join(command)}\n{result.stdout[-3000:]}{result.stderr[-3000:]}", file=sys.stderr)
    return result.returncode


def dry_launch(arguments: list[str]) -> int:
    return run([*LAUNCH, "-n", *arguments])


def launch(arguments: list[str]) -> int:
    """A Snakemake call of a documented command: dry-run now when it names a config file, else recorded."""
    if "--configfile" in arguments:
        return dry_launch(arguments)
    with open(os.environ["DOC_COMMANDS_LOG"], "a") as log:
        log.write(json.dumps({"arguments": arguments, "command": os.environ.get("DOC_COMMAND", "")}) + "\n")
    return 0


# Words that change nothing a dry run plans: forcing, printing, dry-running itself.
PLAN_NEUTRAL = {"-f", "--force", "-n", "--dry-run", "-p", "--printshellcmds"}


def options_and_targets(arguments: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """A call's options that shape its plan (the cores as `all`: they change no job) and its targets."""
    from snakemake.cli import get_argument_parser

    targets = list(get_argument_parser().parse_args(arguments).targets or [])
    words = list(arguments)
    for target in targets:  # a positional: its last occurrence (`--cores all -f all`)
        del words[len(words) - 1 - words[::-1].index(target)]
    options = []
    for word in words:
        if options and options[-1] in ("--cores", "-c"):
            word = "all"
        if word not in PLAN_NEUTRAL:
            options.append(word)
    return tuple(options), targets


def replay(log: Path, project: Path, passed: set[str] | None = None) -> list[str]:
    """Every recorded call dry-run in the project, one run per set of options with all its targets: the failures,
    with the commands behind each. `passed`: keys (dry_run_key) of dry runs that passed on these very files,
    skipped; each that passes now is added."""
    groups: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
    for line in log.read_text().splitlines():
        call = json.loads(line)
        options, targets = options_and_targets(call["arguments"])
        group = groups.setdefault(options, ([], []))
        group[0].extend(target for target in targets if target not in group[0])
        group[1].append(call["command"])
    failed, tree = [], tree_digest(project)
    for options, (targets, commands) in groups.items():
        key = hashlib.sha256(json.dumps([tree, options, targets]).encode()).hexdigest()
        if passed is not None and key in passed:
            continue
        # the targets first: an option of many values (--config a=1 b=2) would take them as its own
        result = subprocess.run([*LAUNCH, *targets, "-n", *options], cwd=project, capture_output=True, text=True)
        if result.returncode != 0:
            failed.append("\n".join(commands) + f"\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
        elif passed is not None:
            passed.add(key)
    return failed


def tree_digest(project: Path) -> str:
    """sha256 of every file a dry run reads: the workflow, the code, the configs, the scale recorded."""
    digest = hashlib.sha256()
    files = [project / name for name in ("Snakefile", "config.yaml", "claims.yaml", "results/.scale", "more.yaml")]
    for path in sorted([*files, *(project / "workflow").rglob("*"), *(project / "src").rglob("*.py")]):
        if path.is_file():
            digest.update(str(path.relative_to(project)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def verify_targets(words: list[str]) -> list[str]:
    if "--targets" not in words:
        return []
    rest = words[words.index("--targets") + 1:]
    return [word for word in rest[:next((i for i, w in enumerate(rest) if w.startswith("--")), len(rest))]]


def make(arguments: list[str]) -> int:
    real = os.environ["DOC_COMMANDS_MAKE"]
    if "first-seed" in arguments:
        return subprocess.run([real, *arguments]).returncode
    recipe = subprocess.run([real, "-n", *arguments], capture_output=True, text=True)
    if recipe.returncode != 0:
        print(recipe.stdout[-3000:] + recipe.stderr[-3000:], file=sys.stderr)
        return recipe.returncode
    status = 0
    for line in recipe.stdout.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if "rlstudy.runtime.launch" in words and not {"--report", "--lint"} & set(words):
            status |= launch(words[words.index("rlstudy.runtime.launch") + 1:])
        targets = verify_targets(words) if "rlstudy.report.cli.verify" in words else []
        if targets:
            scale = ["--profile", "workflow/profiles/smoke"] if smoke_checkout() else []
            status |= launch(["--cores", "all", *scale, *targets])
    return status


def python(arguments: list[str]) -> int:
    if arguments[:1] == ["-m"]:
        return run([sys.executable, "-m", arguments[1], "--help"])
    py_compile.compile(arguments[0], doraise=True)
    return 0


def pip(arguments: list[str]) -> int:
    extras = tomllib.loads(Path("pyproject.toml").read_text())["project"]["optional-dependencies"]
    wanted = re.findall(r"\.\[([a-z,-]+)\]", " ".join(arguments))
    return 0 if wanted and all(extra in extras for group in wanted for extra in group.split(",")) else 1


def install_shims(folder: Path, project: Path) -> dict[str, str]:
    """Shims named make, snakemake, python and pip in folder; the environment that puts them first (and the
    project's src/ on the path, as in a job)."""
    folder.mkdir(parents=True, exist_ok=True)
    real_make = shutil.which("make")
    for name in SHIMS:
        shim = folder / name
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(__file__)} {name} \"$@\"\n")
        shim.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}", "PYTHONPATH": str(project / "src"),
            "DOC_COMMANDS_MAKE": real_make}


if __name__ == "__main__":
    tool, *rest = sys.argv[1:]
    if tool == "snakemake":
        sys.exit(launch(rest))
    sys.exit({"make": make, "python": python, "pip": pip}[tool](rest))
