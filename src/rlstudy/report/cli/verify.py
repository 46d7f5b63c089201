"""Rebuild part of a published run in a scratch copy of the project and compare it with its manifest.

`make verify TARGETS="results/..."` rebuilds the named artefacts, `make verify SAMPLE=5` a seeded
sample of five jobs (artefacts of distinct folders whose build needs at most --max-jobs jobs), each
with its upstream, in a scratch copy of the checkout (its Snakefile, config, workflow/ and src/: no
data/ or results/), at the manifest's scale and with its Snakemake options; `make verify RUN=.`
compares the checkout's own finished run, rebuilding nothing. Each artefact is then, against
docs/manifest.json (rlstudy.report.cli.write_manifest):

- identical: the manifest's sha256;
- within tolerance: another platform, a kind whose spread across platforms was measured, inside it;
- chaotic: another platform, a trained network's numbers (or a table or figure drawn from them), which
  another CPU's kernels move beyond any per-number tolerance: compared through the verdicts only;
- measured: a wall time, never compared;
- different: anything else. On the manifest's own platform every artefact but the measured must be
  identical.

The platforms are the same when the manifest's `platform.rounding` (CPU, its BLAS flags, OpenBLAS's
kernels, PyTorch's CPU capability, the BLAS environment, library versions) equals this machine's.
Each claim's verdict is compared with the manifest's (compare_verdicts): where results/claims.csv was
rebuilt (TARGETS=results/claims.csv, a whole run: RUN=.), its verdicts; otherwise the rebuilt runs' rows,
recomputed by their tables' steps with the published parameters and put in place of theirs in the
manifest's tables, evaluated by evaluate_claims (on another platform: whether a chaotic run's new
numbers would move a verdict). Exits with status 1 when an artefact is different or
a verdict moved, 2 when the manifest or the build fails.

    python -m rlstudy.report.cli.verify --manifest docs/manifest.json --sample 5
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rlstudy.claims.cli.compare_verdicts import compare, verdicts
from rlstudy.core.cli import integer_from, parser, run
from rlstudy.core.config import load_yaml
from rlstudy.core.errors import InputError, PipelineError
from rlstudy.core.provenance import PROVENANCE_SUFFIX, sha256_file
from rlstudy.report.cli.write_manifest import FOLDERS, TABLES, load_manifest, platform_record

# Across platforms, per kind of artefact (write_manifest.KINDS), from the one measurement there is:
# the same seeds at paper scale on an AMD EPYC (OpenBLAS's Haswell kernels, pinned) and an Intel Xeon
# (AVX-512/AMX, no pin), ../shared/FACTS.md, "Measured 2026-11-27": the learned Q*'s exact error agreed to
# three digits, the tabular agents' returns exactly, and every trained network's numbers moved (control
# SGD-UR finals by 19-93 % run by run, DQN seed 0 500.0 against 149.4, BCQ 141.2 against 295.7, DDPG
# finals 1-7 %): "across platforms only the spread over seeds and the verdicts can be compared".
RTOL_THREE_DIGITS = 5e-3
CROSS_PLATFORM = {
    "tabular-agent": "exact",  # the Q-table's returns agreed exactly
    "reference-error": "rtol",  # the learned Q*'s exact error agreed to three digits
    "reference": "chaotic",  # the learned Q*'s network itself: trained
    "run": "chaotic",
    "agent": "chaotic",
    "offline": "chaotic",
    "table": "chaotic",  # summaries of trained runs
    "figure": "chaotic",  # drawn from them (and from a renderer's rounding)
    # byte-identical under every BLAS setting this machine emulates (benchmarks/platform_spread.py, docs/ci.md)
    "trajectory": "exact",
    "exact": "exact",
    # not measured across platforms: no tolerance to apply, a difference is reported as one
    "authors-import": "unmeasured",
}
PROJECT_FILES = ("Snakefile", "config.yaml", "claims.yaml", "envs.yaml")
PROJECT_FOLDERS = ("workflow", "src")
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def copy_project(project: Path, scratch: Path) -> None:
    """The files a workflow run needs (no outputs, logs or .snakemake), into scratch."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in PROJECT_FILES:
        if not (project / name).is_file():
            raise InputError(f"{project}: no {name}; --project names the checkout to rebuild")
        shutil.copy(project / name, scratch / name)
    for name in PROJECT_FOLDERS:
        shutil.copytree(project / name, scratch / name, ignore=ignore)


def reachable_args(args: list[str], project: Path) -> list[str]:
    """The run's Snakemake options, less an `authors_data=PATH` whose folder is not beside this checkout
    (a CI machine without ../shared): the authors' half is then not built, and not sampled."""
    kept = []
    for arg in args:
        key, _, value = arg.partition("=")
        if key == "authors_data" and value != "none" and not (project / value).is_dir():
            print(f"the run's authors_data {value} is not here: its jobs are left out")
            continue
        kept.append(arg)
    return [] if kept == ["--config"] else kept


def snakemake_command(record: dict, extra: list[str], cores: str, project: Path) -> list[str]:
    profile = ["--profile", "workflow/profiles/smoke"] if record["scale"] == "smoke" else []
    return [SNAKEMAKE, *profile, "--cores", cores, *reachable_args(record.get("snakemake_args", []), project), *extra]


def with_targets(command: list[str], targets: list[str]) -> list[str]:
    """The targets right after `snakemake`: options such as --config take every word after them."""
    return [command[0], *targets, *command[1:]]


def _snakemake(command: list[str], scratch: Path) -> subprocess.CompletedProcess:
    # PYTHONPATH: the scratch copy's src, so that its code (edited or not) is what the jobs import
    env = {**os.environ, "PYTHONPATH": str(scratch / "src")} if (scratch / "src").is_dir() else None
    return subprocess.run(command, cwd=scratch, capture_output=True, text=True, env=env)


def jobs_needed(command: list[str], scratch: Path, target: str) -> int | None:
    """How many jobs Snakemake would run to build target in the (empty) scratch copy; None if it cannot."""
    done = _snakemake([*with_targets(command, [target]), "--dry-run", "--quiet", "rules"], scratch)
    totals = re.findall(r"^total\s+(\d+)", done.stdout + done.stderr, re.M)
    return int(totals[-1]) if done.returncode == 0 and totals else None


def sample_targets(record: dict, count: int, seed: int, max_jobs: int, command: list[str],
                   scratch: Path) -> list[str]:
    """count artefacts of distinct folders, drawn with `seed`, each needing at most max_jobs jobs."""
    candidates = sorted(path for path, entry in record["artefacts"].items() if not entry.get("measured"))
    random.Random(seed).shuffle(candidates)
    chosen, folders = [], set()
    for path in candidates[:20 * count]:
        folder = str(Path(path).parent)
        if folder in folders:
            continue
        jobs = jobs_needed(command, scratch, path)
        if jobs is not None and jobs <= max_jobs:
            chosen.append(path)
            folders.add(folder)
            if len(chosen) == count:
                break
    if not chosen:
        raise InputError(f"no artefact of the manifest builds within {max_jobs} jobs here; raise --max-jobs")
    return chosen


def differing_platform(published: dict, here: dict) -> list[str]:
    """The keys of the rounding platform that differ between the manifest's and this machine's."""
    keys = sorted(set(published) | set(here))
    return [key for key in keys if published.get(key) != here.get(key)]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def within(published: dict, rebuilt: Path, rtol: float) -> bool:
    """A rebuilt table against its rows in the manifest: the same columns and rows, text cells equal,
    numbers within rtol (NaN equals NaN)."""
    with open(rebuilt, newline="") as f:
        header, *rows = list(csv.reader(f))
    if header != published["columns"] or len(rows) != len(published["rows"]):
        return False
    for row, old in zip(rows, published["rows"]):
        for new_cell, old_cell in zip(row, old):
            new, before = _number(new_cell), _number(old_cell)
            if new is None or before is None:
                if new_cell != old_cell:
                    return False
            elif not (math.isnan(new) and math.isnan(before)) and not math.isclose(new, before, rel_tol=rtol):
                return False
    return True


def judge(path: str, rebuilt: Path, record: dict, same_platform: bool) -> tuple[str, bool]:
    """(what the rebuilt artefact is against the manifest, whether that fails the check)."""
    entry = record["artefacts"].get(path)
    if entry is None:
        return "not in the manifest", False
    if entry.get("measured"):
        return "measured (not compared)", False
    if sha256_file(rebuilt) == entry["sha256"]:
        return "identical", False
    if same_platform:
        return "different (the manifest's platform: every bit should repeat)", True
    rule = CROSS_PLATFORM.get(entry["kind"], "unmeasured")
    if rule == "chaotic":
        return "chaotic (another platform: compared through the verdicts)", False
    if rule == "rtol":
        table = next((t for t in record["tables"].values() if t["path"] == path), None)
        if table is not None and within(table, rebuilt, RTOL_THREE_DIGITS):
            return f"within tolerance (another platform: rtol {RTOL_THREE_DIGITS:g})", False
        return f"different (beyond rtol {RTOL_THREE_DIGITS:g} across platforms)", True
    if rule == "exact":
        return "different (another platform, but this kind repeated exactly across platforms)", True
    return "different (another platform; this kind was never measured across platforms)", True


def rebuilt_files(scratch: Path) -> list[str]:
    return sorted(p.relative_to(scratch).as_posix() for folder in FOLDERS for p in (scratch / folder).rglob("*")
                  if p.is_file() and not p.name.endswith(PROVENANCE_SUFFIX) and not p.name.startswith("."))


def write_table(table: dict, path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(table["columns"])
        writer.writerows(table["rows"])


def verdict_lines(record: dict, claims: Path, what: str) -> tuple[list[str], bool]:
    """Each moved verdict of claims.csv against the manifest's, a count, and whether one moved."""
    with tempfile.TemporaryDirectory() as folder:  # the manifest's claims as a table (never in the run)
        published = Path(folder) / "claims.csv"
        write_table(record["tables"]["claims"], published)
        table = compare(verdicts(str(published)), verdicts(str(claims)))
    moved = table["moved"].dropna().astype(bool)
    lines = [f"verdict `{claim}`: {table.at[claim, 'verdict_before']} -> {table.at[claim, 'verdict_after']} **moved**"
             for claim in moved.index[moved]]
    lines.append(f"verdicts{what}: {len(moved)} claims compared, {int(moved.sum())} moved")
    return lines, bool(moved.any())


# The per-run tables a rebuilt run has a row in: the step that writes them, the run folders it reads
# (a pattern of the rebuilt files), and the columns that name a run.
RUN_TABLES = {
    "summary": ("rlstudy.bellman.cli.summarise", r"(results/runs/[^/]+/[^/]+/[^/]+/[^/]+/seed\d+)/q\.pt",
                ["dataset", "task", "setting", "estimator", "seed"]),
    "agents": ("rlstudy.agents.cli.summarise_agents", r"(results/agents/[^/]+/seed\d+)/evaluation\.csv",
               ["agent", "env", "seed"]),
    "offline": ("rlstudy.offline.cli.summarise_offline", r"(results/offline/[^/]+/seed\d+)/buffer/performance\.csv",
                ["env", "seed", "learner"]),
}


def table_arguments(name: str, runs: list[str], parameters: dict, out: Path, problem: dict) -> list[str]:
    """The step's options for these runs alone, with the parameters the published table was made with
    (`problem`: the checkout's config `problem`, given the discount the table's record names)."""
    if name == "summary":
        problem = {**problem, "gamma": parameters["gamma"]}
        return ["--curves", *[f"{run}/errors.csv" for run in runs], "--exact", json.dumps(parameters["exact"]),
                "--problem", json.dumps(problem), "--converged-below", str(parameters["converged_below"]),
                "--out", str(out), "--stats-out", str(out.with_name("stats.rebuilt.csv"))]
    if name == "agents":
        return ["--runs", *runs, "--agents", json.dumps(parameters["agents"]), "--out", str(out)]
    return ["--runs", *runs, "--out", str(out)]


def project_rows(record: dict, scratch: Path, files: list[str], command: list[str], folder: Path) -> list[str]:
    """The published tables with the rows of the runs rebuilt in scratch put in place of theirs, written
    into folder; lines saying what was projected and what could not be."""
    notes = []
    for name, (step, pattern, keys) in RUN_TABLES.items():
        runs = sorted({match.group(1) for f in files if (match := re.fullmatch(pattern, f))})
        if not runs or name not in record["tables"]:
            continue
        parameters = record["tables"][name].get("parameters") or {}
        if name == "summary":  # the exact Q and density of each run's task alone: cheap jobs, built if missing
            entries = [entry for entry in parameters.get("exact", {}).get("rows", [])
                       if any(run.split("/")[2:4] == [entry["dataset"], entry["task"]] for run in runs)]
            parameters = {**parameters, "exact": {"rows": entries}}
            needed = {entry[kind] for entry in entries for kind in ("exact", "density")}
            missing = sorted(path for path in needed if not (scratch / path).is_file())
            if missing and (not command or _snakemake(with_targets(command, missing), scratch).returncode != 0):
                notes.append(f"{name}: the exact Q of its runs could not be built; not projected")
                continue
        out = folder / f"{name}.rebuilt.csv"
        problem = load_yaml(scratch / "config.yaml", "config file")["problem"]
        done = _snakemake([sys.executable, "-m", step, *table_arguments(name, runs, parameters, out, problem)], scratch)
        if done.returncode != 0:
            notes.append(f"{name}: {step} refused the rebuilt runs ({(done.stderr.strip().splitlines() or ['?'])[-1]}); "
                         "not projected")
            continue
        published = record["tables"][name]
        with open(out, newline="") as f:
            header, *rows = list(csv.reader(f))
        if header != published["columns"]:
            notes.append(f"{name}: the rebuilt rows have other columns than the published; not projected")
            continue
        at = [published["columns"].index(key) for key in keys]
        index = {tuple(row[i] for i in at): n for n, row in enumerate(published["rows"])}
        patched, unchanged = list(published["rows"]), 0
        for row in rows:
            key = tuple(row[i] for i in at)
            if key in index:
                unchanged += patched[index[key]] == row
                patched[index[key]] = row
            else:
                patched.append(row)
        record = {**record, "tables": {**record["tables"], name: {**published, "rows": patched}}}
        notes.append(f"{name}: {len(rows)} rows of {len(runs)} rebuilt runs put in the published table "
                     f"({unchanged} as published)")
    for name, table in record["tables"].items():
        if name != "claims":
            write_table(table, folder / f"{name}.csv")
    return notes


def compare_claims(record: dict, run_folder: Path, command: list[str] | None = None) -> tuple[list[str], bool]:
    """Lines on each claim's verdict, and whether one moved. Where results/claims.csv was not rebuilt, the
    rebuilt runs' rows are put into the published tables and the claims evaluated on them (command: the
    Snakemake command, to build the exact Q the bellman rows need)."""
    rebuilt = run_folder / TABLES["claims"]
    if "claims" not in record["tables"]:
        return ["verdicts: not compared (the manifest has no claims)"], False
    if rebuilt.is_file():
        return verdict_lines(record, rebuilt, "")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        notes = project_rows(record, run_folder, rebuilt_files(run_folder), command or [], folder)
        if not any("rows of" in note for note in notes):
            return [*notes, "verdicts: not compared (no rebuilt run has a row in the tables the claims read; "
                    "TARGETS=results/claims.csv rebuilds them all)"], False
        tables = [f"{table.stem}={table}" for table in sorted(folder.glob("*.csv")) if "." not in table.stem]
        done = _snakemake([sys.executable, "-m", "rlstudy.claims.cli.evaluate_claims", "--claims", "claims.yaml",
                           "--schema", "workflow/schemas/claims.schema.yaml", "--table", *tables,
                           "--out", str(folder / "claims.csv")], run_folder)
        if done.returncode != 0:
            raise PipelineError(f"the claims on the published tables with the rebuilt rows: "
                                f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
        lines, moved = verdict_lines(record, folder / "claims.csv", " (the published tables with the rebuilt runs' rows)")
    return [*notes, *lines], moved


def platform_line(record: dict) -> bool:
    """Print which platform this is against the manifest's; True when the same."""
    here = platform_record()["rounding"]
    differ = differing_platform(record["platform"]["rounding"], here)
    same = "the manifest's" if not differ else f"another (differs in {', '.join(differ)})"
    print(f"platform: {same}; this machine: {here['cpu_model']}, OpenBLAS {here['openblas_kernels']}, "
          f"torch {here['torch_cpu_capability']}")
    return not differ


def rebuild(record: dict, project: Path, scratch: Path, targets: list[str] | None, sample: int | None,
            seed: int, max_jobs: int, extra: list[str], cores: str) -> list[str]:
    """The targets, or a sample, built with their upstream in a scratch copy of the project's code; the
    Snakemake command that built them."""
    copy_project(project, scratch)
    command = snakemake_command(record, extra, cores, project)
    if targets is None:
        targets = sample_targets(record, sample, seed, max_jobs, command, scratch)
        print(f"sample (seed {seed}): {' '.join(targets)}")
    done = _snakemake(with_targets(command, targets), scratch)
    if done.returncode != 0:
        raise PipelineError(f"the rebuild in {scratch} failed (exit {done.returncode}): "
                            + " | ".join((done.stderr or done.stdout).strip().splitlines()[-8:]))
    return command


def compare_run(record: dict, run_folder: Path, same_platform: bool, whole_run: bool = False,
                command: list[str] | None = None) -> bool:
    """Print every artefact of run_folder against the manifest and the verdicts; True when everything
    agrees as the platform allows."""
    claim_lines, moved = compare_claims(record, run_folder, command)  # first: it may build the exact Q
    failed = False
    print("\n| artefact | kind | result |\n| --- | --- | --- |")
    counts: dict[str, int] = {}
    found = rebuilt_files(run_folder)
    for path in found:
        result, fails = judge(path, run_folder / path, record, same_platform)
        failed |= fails
        kind = record["artefacts"].get(path, {}).get("kind", "")
        print(f"| `{path}` | {kind} | {result} |")
        counts[result.split(" (")[0]] = counts.get(result.split(" (")[0], 0) + 1
    print("\n" + ", ".join(f"{n} {result}" for result, n in sorted(counts.items())))
    if whole_run and (missing := len(set(record["artefacts"]) - set(found))):
        print(f"{missing} artefacts of the manifest are not in {run_folder} (not compared)")
    print("\n".join(claim_lines))
    return not (failed or moved)


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


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--manifest", default="docs/manifest.json", help="the published run's manifest")
    p.add_argument("--project", default=".", help="the checkout whose code rebuilds (copied; its outputs are not)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--targets", nargs="+", help="artefacts to rebuild, with their upstream")
    which.add_argument("--sample", type=integer_from(1), help="rebuild this many sampled jobs, with their upstream")
    which.add_argument("--run", help="compare a finished run's folder as it is, rebuilding nothing (e.g. . after "
                                     "make report: the whole run and its verdicts against the published ones)")
    p.add_argument("--seed", type=integer_from(0), default=0, help="the sample's seed")
    p.add_argument("--max-jobs", type=integer_from(1), default=10,
                   help="a sampled artefact's build runs at most this many jobs (its upstream included)")
    p.add_argument("--snakemake-args", default="", help="more Snakemake options, after the manifest's own")
    p.add_argument("--cores", default="all", help="Snakemake's --cores")
    p.add_argument("--scratch", help="an empty folder to rebuild in (default: a new one beside the project, "
                                     "so that relative paths of the options, e.g. ../shared, still resolve)")
    p.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = p.parse_args()
    record = load_manifest(args.manifest)
    same_platform = platform_line(record)
    if args.run:
        agreed = compare_run(record, Path(args.run), same_platform, whole_run=True)
    else:
        project = Path(args.project).resolve()
        scratch = make_scratch(args.scratch, project)
        try:
            command = rebuild(record, project, scratch, args.targets, args.sample, args.seed, args.max_jobs,
                              shlex.split(args.snakemake_args), args.cores)
            agreed = compare_run(record, scratch, same_platform, command=command)
        finally:
            if not args.keep:
                shutil.rmtree(scratch, ignore_errors=True)
            else:
                print(f"scratch copy kept: {scratch}")
    print("verify: " + ("agrees with the manifest" if agreed
                        else "DIFFERS from the manifest beyond what the platform explains"))
    if not agreed:
        sys.exit(1)


if __name__ == "__main__":
    run(main)
