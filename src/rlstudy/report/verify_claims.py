"""Each claim's verdict of a rebuild against the manifest's, for verify (report/cli/verify.py).

Where results/claims.csv was rebuilt (TARGETS=results/claims.csv, a whole run: RUN=.), its verdicts;
otherwise the rebuilt runs' rows, recomputed by their tables' steps with the published parameters and
put in place of theirs in the manifest's tables, evaluated by evaluate_claims (on another platform:
whether a chaotic run's new numbers would move a verdict); not for a run that decided its claims look by
look (a group-sequential design: results/looks/), whose looks a projection cannot replay. Every table it writes is in the verify's
scratch folder, under a file name of its own fixed set (TABLE_FILES), never one the manifest names.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

from rlstudy.claims.publication import publications_in
from rlstudy.report.verdict_comparison import compare, verdicts
from rlstudy.core.config import load_yaml
from rlstudy.core.looks import LOOKS_DIR
from rlstudy.core.errors import InputError, PipelineError
from rlstudy.core.regular_files import shown
from rlstudy.report.manifest import TABLES, read_table
from rlstudy.report.manifest_schema import ARTEFACT_PATH
from rlstudy.report.protocol import analysis_code, read_lock
from rlstudy.report.rebuild import snakemake
from rlstudy.report.verify import run_files, write_table

# The file each of the claims' tables is written to in the scratch folder, by its name in TABLES.
TABLE_FILES = {name: name for name in TABLES if name != "claims"}
LOOKS_PREFIX = f"{LOOKS_DIR.as_posix()}/"  # a run of a group-sequential design lists its looks' files


def run_step(step: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """A step of the project's (python -m module ...) in cwd, with cwd's code where it has a src/."""
    env = {**os.environ, "PYTHONPATH": str(cwd / "src")} if (cwd / "src").is_dir() else None
    return subprocess.run([sys.executable, "-m", *step], cwd=cwd, capture_output=True, text=True, env=env)


def evaluate(tables: Path, out: Path, cwd: Path) -> None:
    """evaluate_claims of cwd's code and claims on the tables written in `tables` (TABLE_FILES), into out."""
    given = [f"{name}={tables / TABLE_FILES[name]}.csv" for name in TABLE_FILES
             if (tables / f"{TABLE_FILES[name]}.csv").is_file()]
    publications = publications_in(cwd)
    done = run_step(["rlstudy.claims.cli.evaluate_claims", "--claims", "claims.yaml",
                     "--schema", "workflow/schemas/claims.schema.yaml", "--table", *given, "--out", str(out),
                     *(["--publication", *publications] if publications else [])], cwd)
    if done.returncode != 0:
        raise PipelineError(f"the claims on the tables of {tables}: {(done.stderr.strip().splitlines() or ['?'])[-1]}")


def analysis_changed(project: Path) -> list[str]:
    """The files of the analysis code that differ in project from its protocol.lock (the code the published
    verdicts were decided by), by path; [] where it matches or there is no lock."""
    lock_path = project / "protocol.lock"
    if not lock_path.is_file():
        return []
    lock = read_lock(lock_path)
    here = analysis_code(project, lock)
    return sorted(path for path in {*here, *lock["analysis_code"]} if here.get(path) != lock["analysis_code"].get(path))


def baseline_verdicts(record: dict, project: Path, work: Path) -> tuple[Path | None, list[str]]:
    """The verdicts a rebuild's are compared with: the manifest's own where project's analysis code is the
    lock's (an edited verdict in the manifest then shows as moved); otherwise those of project's code on the
    published tables, so that a changed test is not taken for a moved rebuild (said in a line); None, with
    the reason, where project's claims cannot read the published tables (a claim reading a column the
    publication's tables do not have): those verdicts are then not compared, said in a line."""
    published = work / "published-claims.csv"  # the manifest's claims as a table, in the scratch folder
    write_table(record["tables"]["claims"], published)
    changed = analysis_changed(project)
    if not changed:
        return published, []
    folder = work / "published-tables"
    folder.mkdir()
    for name, table in record["tables"].items():  # names from TABLES' fixed set (manifest_schema)
        if name != "claims":
            write_table(table, folder / f"{TABLE_FILES[name]}.csv")
    ours = work / "published-tables-claims.csv"
    try:
        evaluate(folder, ours, project)
    except PipelineError as error:
        return None, [f"analysis code: {len(changed)} files differ from protocol.lock's (e.g. {changed[0]}), and "
                      f"this checkout's claims do not read the published tables ({error}): verdicts not compared"]
    differ = compare(verdicts(str(published)), verdicts(str(ours)))["moved"].dropna().astype(bool)
    return ours, [f"analysis code: {len(changed)} files differ from protocol.lock's (e.g. {changed[0]}): the "
                  f"verdicts are compared with this checkout's on the published tables, which decide "
                  f"{int(differ.sum())} of {len(differ)} published verdicts otherwise"]


def verdict_lines(before: Path, claims: Path, what: str) -> tuple[list[str], bool]:
    """Each moved verdict of claims.csv against `before`'s, a count, and whether one moved."""
    table = compare(verdicts(str(before)), verdicts(str(claims)))
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


def exact_rows(parameters: dict) -> list[dict]:
    """The summary's exact-Q rows as its record gives them, each path one the manifest could list (they
    become Snakemake targets and a step's inputs: checked like the manifest's artefacts)."""
    rows = parameters.get("exact", {}).get("rows", []) if isinstance(parameters.get("exact"), dict) else []
    checked = []
    for entry in rows if isinstance(rows, list) else []:
        if not isinstance(entry, dict):
            raise InputError("the manifest's tables.summary.parameters.exact.rows: a row is not a mapping")
        for key in ("dataset", "task", "exact", "density"):
            if not isinstance(entry.get(key), str):
                raise InputError(f"the manifest's tables.summary.parameters.exact.rows: {key} is not text")
        for key in ("exact", "density"):
            if not re.fullmatch(ARTEFACT_PATH, entry[key]):
                raise InputError(f"the manifest's tables.summary.parameters.exact.rows: {key} {shown(entry[key])} "
                                 "is not a path under data/, results/ or figures/")
        checked.append(entry)
    return checked


def _number(parameters: dict, key: str) -> str:
    value = parameters.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"the manifest's tables.summary.parameters.{key} is {str(value)[:40]!r}, not a number")
    return repr(value)


def table_arguments(name: str, runs: list[str], parameters: dict, out: Path, problem: dict) -> list[str]:
    """The step's options for these runs alone, with the parameters the published table was made with
    (`problem`: the checkout's config `problem`, given the discount the table's record names)."""
    if name == "summary":
        problem = {**problem, "gamma": float(_number(parameters, "gamma"))}
        return ["--curves", *[f"{run}/errors.csv" for run in runs], f"--exact={json.dumps(parameters['exact'])}",
                f"--problem={json.dumps(problem)}", f"--converged-below={_number(parameters, 'converged_below')}",
                "--out", str(out), "--stats-out", str(out.with_name("stats.rebuilt.csv"))]
    if name == "agents":
        return ["--runs", *runs, f"--agents={json.dumps(parameters.get('agents'))}", "--out", str(out)]
    return ["--runs", *runs, "--out", str(out)]


def project_rows(record: dict, scratch: Path, files: list[str], arguments: list[str] | None,
                 folder: Path) -> list[str]:
    """The published tables with the rows of the runs rebuilt in scratch put in place of theirs, written
    into folder; lines saying what was projected and what could not be."""
    notes = []
    for name, (step, pattern, keys) in RUN_TABLES.items():
        runs = sorted({match.group(1) for f in files if (match := re.fullmatch(pattern, f))})
        if not runs or name not in record["tables"]:
            continue
        parameters = record["tables"][name].get("parameters") or {}
        if name == "summary":  # the exact Q and density of each run's task alone: cheap jobs, built if missing
            entries = [entry for entry in exact_rows(parameters)
                       if any(run.split("/")[2:4] == [entry["dataset"], entry["task"]] for run in runs)]
            parameters = {**parameters, "exact": {"rows": entries}}
            needed = {entry[kind] for entry in entries for kind in ("exact", "density")}
            missing = sorted(path for path in needed if not (scratch / path).is_file())
            if missing and (arguments is None or snakemake(missing, arguments, scratch)[0] != 0):
                notes.append(f"{name}: the exact Q of its runs could not be built; not projected")
                continue
        out = folder / f"{name}.rebuilt.csv"
        problem = load_yaml(scratch / "config.yaml", "config file")["problem"]
        done = run_step([step, *table_arguments(name, runs, parameters, out, problem)], scratch)
        if done.returncode != 0:
            notes.append(f"{name}: {step} refused the rebuilt runs ({(done.stderr.strip().splitlines() or ['?'])[-1]}); "
                         "not projected")
            continue
        published = record["tables"][name]
        header, *rows = read_table(out)
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
    for name, table in record["tables"].items():  # names from TABLES' fixed set (manifest_schema)
        if name != "claims":
            write_table(table, folder / f"{TABLE_FILES[name]}.csv")
    return notes


def compare_claims(record: dict, run_folder: Path, work: Path,
                   arguments: list[str] | None = None) -> tuple[list[str], bool]:
    """Lines on each claim's verdict, and whether one moved. Where results/claims.csv was not rebuilt, the
    rebuilt runs' rows are put into the published tables and the claims evaluated on them (arguments:
    Snakemake's options, to build the exact Q the bellman rows need). Every table is written in work."""
    rebuilt = run_folder / TABLES["claims"]
    if "claims" not in record["tables"]:
        return ["verdicts: not compared (the manifest has no claims)"], False
    if rebuilt.is_file():
        before, code = baseline_verdicts(record, run_folder, work)
        if before is None:
            return code, False
        lines, moved = verdict_lines(before, rebuilt, "")
        return [*code, *lines], moved
    if any(path.startswith(LOOKS_PREFIX) for path in record["artefacts"]):
        return ["verdicts: not compared (the published run decided its claims look by look, "
                "results/looks/, which a projection of rebuilt rows cannot replay; RUN=. after make figures "
                "compares the whole run's verdicts)"], False
    folder = work / "tables"
    folder.mkdir()
    notes = project_rows(record, run_folder, run_files(run_folder), arguments, folder)
    if not any("rows of" in note for note in notes):
        return [*notes, "verdicts: not compared (no rebuilt run has a row in the tables the claims read; "
                "TARGETS=results/claims.csv rebuilds them all)"], False
    try:
        evaluate(folder, folder / "claims.csv", run_folder)
    except PipelineError as error:
        return [*notes, f"verdicts: not compared (this checkout's claims do not read the published tables with the "
                        f"rebuilt runs' rows: {error})"], False
    before, code = baseline_verdicts(record, run_folder, work)
    if before is None:
        return [*notes, *code], False
    lines, moved = verdict_lines(before, folder / "claims.csv", " (the published tables with the rebuilt runs' rows)")
    return [*notes, *code, *lines], moved
