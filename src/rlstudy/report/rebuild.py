"""A published run's artefacts rebuilt in a scratch copy of the project, for verify (report/cli/verify.py).

The scratch copy holds the project's code (Snakefile, configs, workflow/, src/; no outputs): the
checkout's files, or those of a commit of its repository (`git archive`: the commit the published run
was built at, so that later edits of the checkout do not move what is verified), beside the
project, so that the user's relative options (`--config authors_data=../shared/...`) still resolve, and
everything a rebuild writes is inside it. Snakemake runs through the project's launcher
(`python -m rlstudy.runtime.launch`), as every Makefile target does: a config or profile file is read
as plain data first, and a YTE template is refused before any of it runs. Its options are the
checkout's (the scale's profile) and the user's own (--snakemake-args): nothing of the manifest but its
scale (checked: paper or smoke) and the targets (checked: artefacts it lists, relative paths under
data/, results/, figures/) reaches the command line. Progress is streamed as Snakemake works: each job
started, each count of jobs done, and an error line the moment Snakemake prints it.
"""

from __future__ import annotations

import io
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import deque
from pathlib import Path

from rlstudy.claims.publication import COMMIT, PUBLICATIONS
from rlstudy.core.errors import InputError
from rlstudy.report.protocol import run_git

PROJECT_FILES = ("Snakefile", "config.yaml", "claims.yaml", "envs.yaml", "protocol.lock", "spent_blocks.yaml")
PROJECT_FOLDERS = ("workflow", "src", PUBLICATIONS)  # the publications: the verdicts carried claims keep
LAUNCHER = ("-m", "rlstudy.runtime.launch")
_RULE = re.compile(r"^(?:local)?rule (\S+):$")
_OUTPUT = re.compile(r"^\s+output: (.*)$")
_DONE = re.compile(r"^(\d+) of (\d+) steps \(\S+\) done$")
# Snakemake's errors (WorkflowError, MissingInputException, "Error in rule ..."), the launcher's refusals,
# a step's "error: ..." line: not a word of a path such as errors.csv
_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|^Error\b|\berror: |refused|^rlstudy\.runtime\.launch:")
TAIL_LINES = 12


def say(line: str) -> None:
    print(line, flush=True)


def copy_project(project: Path, scratch: Path, commit: str | None = None) -> None:
    """The files a workflow run needs (no outputs, logs or .snakemake), into scratch: the checkout's, or
    with `commit` that commit's (export_commit); said as it goes. The checkout's copy keeps Numba's cache
    of its kernels (`__pycache__/*.nbi, *.nbc`: Numba checks each source's size and mtime, which the copy
    keeps), so the rebuild loads the kernels the checkout compiled instead of compiling them (about a
    minute of CPU); a commit's export has new files, and compiles."""
    if commit is not None:
        export_commit(project, commit, scratch)
        return
    ignore = shutil.ignore_patterns("*.pyc", "*.egg-info")
    for name in PROJECT_FILES:
        if not (project / name).is_file():
            raise InputError(f"{project}: no {name}; --project names the checkout to rebuild")
        shutil.copy(project / name, scratch / name)
    say(f"copied {', '.join(PROJECT_FILES)} into {scratch}")
    for name in PROJECT_FOLDERS:
        shutil.copytree(project / name, scratch / name, ignore=ignore)
        count = sum(1 for path in (scratch / name).rglob("*") if path.is_file())
        say(f"copied {name}/ ({count} files)")


def has_commit(project: Path, commit: str) -> bool:
    """Whether the project is a git checkout whose repository holds this commit (a full hash)."""
    if not re.fullmatch(COMMIT, commit):
        return False
    return run_git(project, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def export_commit(project: Path, commit: str, scratch: Path) -> None:
    """The files a workflow run needs as the commit has them, from the project's repository (git archive;
    a file the commit does not have yet is left out), into scratch; the archive is unpacked as data
    (no link or path outside scratch)."""
    if not has_commit(project, commit):
        raise InputError(f"commit {commit[:60]!r}: not a commit of the repository of {project}")
    listed = run_git(project, "ls-tree", "--name-only", commit, "--", *PROJECT_FILES, *PROJECT_FOLDERS)
    names = listed.stdout.decode(errors="replace").split()
    if listed.returncode != 0 or "Snakefile" not in names:
        raise InputError(f"commit {commit[:12]} of {project}: no Snakefile, not a commit of this workflow")
    archive = run_git(project, "archive", "--format=tar", commit, "--", *names)
    if archive.returncode != 0:
        why = archive.stderr.decode(errors="replace")[-300:]
        raise InputError(f"git archive {commit[:12]} in {project} failed: {why}")
    try:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as files:
            files.extractall(scratch, filter="data")
    except tarfile.TarError as error:
        raise InputError(f"commit {commit[:12]} of {project}: its files cannot be unpacked as data ({error})") from None
    say(f"exported {', '.join(names)} of commit {commit[:12]} into {scratch}")


def make_scratch(folder: str | None, project: Path) -> Path:
    if folder:
        scratch = Path(folder)
        scratch.mkdir(parents=True, exist_ok=True)
        if any(scratch.iterdir()):
            raise InputError(f"--scratch {scratch}: not empty")
        return scratch
    try:
        return Path(tempfile.mkdtemp(prefix=f".{project.name}-verify-", dir=project.parent))
    except OSError:
        return Path(tempfile.mkdtemp(prefix="rlstudy-verify-"))


def options(scale: str, cores: str, user_args: list[str]) -> list[str]:
    """Snakemake's options: the scale's profile (from the checkout), the cores, the user's own."""
    if scale not in ("paper", "smoke"):
        raise InputError(f"scale {scale!r}: not paper or smoke")
    profile = ["--profile", "workflow/profiles/smoke"] if scale == "smoke" else []
    return [*profile, "--cores", cores, *user_args]


def _environment(scratch: Path, extra: dict[str, str] | None) -> dict[str, str]:
    # PYTHONPATH: the scratch copy's src, so that its code (edited or not) is what the jobs import
    return {**os.environ, "PYTHONPATH": str(scratch / "src"), **(extra or {})}


def snakemake(targets: list[str], arguments: list[str], scratch: Path, extra_env: dict[str, str] | None = None,
              progress: bool = True) -> tuple[int, list[str]]:
    """Snakemake through the launcher in scratch, the targets first (an option such as --config takes
    every word after it); (exit status, its last lines). With progress, each job started and each count
    of jobs done is printed as it happens, and any error line at once."""
    for target in targets:
        if target.startswith("-"):
            raise InputError(f"target {target!r}: a target is a path, never an option")
    command = [sys.executable, *LAUNCHER, *targets, *arguments]
    process = subprocess.Popen(command, cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", env=_environment(scratch, extra_env))
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    rule = None
    assert process.stdout is not None
    for raw in process.stdout:
        line = raw.rstrip()
        tail.append(line)
        if not progress:
            continue
        if match := _RULE.match(line):
            rule = match.group(1)
        elif rule and (match := _OUTPUT.match(line)):
            say(f"  job started: rule {rule} -> {match.group(1)[:160]}")
            rule = None
        elif match := _DONE.match(line):
            say(f"  jobs done: {match.group(1)} of {match.group(2)}")
        elif _ERROR.search(line):
            say(f"  snakemake: {line[:300]}")
    return process.wait(), list(tail)


def jobs_needed(arguments: list[str], scratch: Path, target: str) -> int | None:
    """How many jobs Snakemake would run to build target in the (empty) scratch copy; None if it cannot."""
    status, lines = snakemake([target], [*arguments, "--dry-run", "--quiet", "rules"], scratch, progress=False)
    totals = [int(match.group(1)) for line in lines if (match := re.match(r"^total\s+(\d+)", line))]
    return totals[-1] if status == 0 and totals else None


def sample_targets(record: dict, count: int, seed: int, max_jobs: int, arguments: list[str],
                   scratch: Path) -> list[str]:
    """count artefacts of distinct folders, drawn with `seed`, each needing at most max_jobs jobs here."""
    candidates = sorted(path for path, entry in record["artefacts"].items() if not entry.get("measured"))
    random.Random(seed).shuffle(candidates)
    chosen, folders = [], set()
    for path in candidates[:20 * count]:
        folder = str(Path(path).parent)
        if folder in folders:
            continue
        jobs = jobs_needed(arguments, scratch, path)
        say(f"sample: {path}: " + (f"{jobs} jobs" if jobs is not None else "not buildable here") +
            (" (kept)" if jobs is not None and jobs <= max_jobs else ""))
        if jobs is not None and jobs <= max_jobs:
            chosen.append(path)
            folders.add(folder)
            if len(chosen) == count:
                break
    if not chosen:
        raise InputError(f"no artefact of the manifest builds within {max_jobs} jobs here; raise --max-jobs")
    return chosen


def build(targets: list[str], arguments: list[str], scratch: Path, extra_env: dict[str, str] | None = None) -> None:
    """Build targets with their upstream in scratch; a failure is an error with Snakemake's last lines."""
    say(f"building {len(targets)} target(s) in {scratch}" + (f" with {extra_env}" if extra_env else ""))
    status, tail = snakemake(targets, arguments, scratch, extra_env)
    if status != 0:
        raise InputError(f"the rebuild in {scratch} failed (exit {status}): " + " | ".join(tail[-8:]))
