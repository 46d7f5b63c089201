"""The manifest of a run: what was published, and the platform that rounded it.

Every artefact under data/, results/ and figures/ with its sha256, size and kind (provenance records
aside: they are counted, not listed, since they name the commit; measured files, the wall times and the
figure drawn from them, marked `measured`); the rows of every summary table the claims read (final
errors, returns: the key numbers of every run, as the files hold them) and the verdicts; the run's
commit (the one its artefacts' records name) and every commit they name, the checkout's that wrote the
manifest; the master seed and every seed list of the config; the scale; and the platform
(report/platform.py). `make readme` writes it as docs/manifest.json (report/cli/write_manifest.py);
`make verify` (report/cli/verify.py) rebuilds part of the run and compares; a manifest read back is
checked field by field first (report/manifest_schema.py).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path

from rlstudy.core.config import ConfigError, load_yaml, schema, strict_validator
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv
from rlstudy.core.provenance import PROVENANCE_SUFFIX, git_commit, read_record, sha256_file
from rlstudy.core.regular_files import read_regular, shown
from rlstudy.core.seed_blocks import BLOCK_KEY, EXPLORATORY, resolve_seed_block, seed_lists
from rlstudy.report.platform import platform_record

FORMAT = 1
FOLDERS = ("data", "results", "figures")
# Measurements of time, the only outputs that differ between two runs on one machine (as the tests'
# project_copy.MEASURED: tests/unit/report/test_manifest.py keeps the two equal).
MEASURED = ("wall_time.csv", "cost_seconds.")
# The tables the claims read (workflow/rules/claims.smk's CLAIM_TABLES) and the verdicts: each row kept
# as its file's text, so the published numbers are the file's own digits.
TABLES = {
    "summary": "results/summary.csv",
    "references": "results/reference/error_exact.csv",
    "sweep": "results/sweep/cbo_sweep.csv",
    "cost": "results/cost.csv",
    "agents": "results/agents/summary.csv",
    "offline": "results/offline/summary.csv",
    "budget": "results/budget/budget.csv",
    "seed_plan": "results/seed_plan.csv",
    "claims": "results/claims.csv",
}
# A summary table is a few MB at paper scale (results/summary.csv: about 1 MB); a bigger file is not one.
MAX_TABLE_BYTES = 64 << 20
# What an artefact is, by path (the first pattern that matches): verify's tolerance across platforms
# is per kind (report/verify.py, CROSS_PLATFORM).
KINDS = (
    (r"^figures/", "figure"),
    (r"^data/trajectories/authors/|^data/reference/authors/", "authors-import"),
    (r"^data/trajectories/", "trajectory"),
    (r"^results/exact/[^/]+/stationary_density\.npy$", "density"),  # a linear solve: BLAS rounds it
    (r"^results/exact/", "exact"),
    (r"^results/reference/error_exact\.csv$", "reference-error"),
    (r"^results/reference/", "reference"),
    (r"^results/agents/qtable/", "tabular-agent"),
    (r"^results/agents/[^/]+/", "agent"),
    (r"^results/(runs|sweep)/[^/]+/", "run"),
    (r"^(data|results)/offline/", "offline"),
    (r"", "table"),
)
KIND_NAMES = tuple(kind for _, kind in KINDS)


def is_measured(path: str) -> bool:
    return Path(path).name.startswith(MEASURED)


def kind_of(path: str) -> str:
    return next(kind for pattern, kind in KINDS if re.search(pattern, path))


def _sha256_and_size(path: Path) -> tuple[str, int]:
    return sha256_file(path), path.stat().st_size


def artefacts(project: Path) -> tuple[dict[str, dict], Counter]:
    """Every file under data/, results/, figures/ but the provenance records (and the folders' .gitkeep),
    by path relative to the project; and the commits the records name, with their counts."""
    listed, commits = {}, Counter()
    for folder in FOLDERS:
        for path in sorted((project / folder).rglob("*")):
            if not path.is_file() or path.name == ".gitkeep" or path.name.startswith("."):
                continue
            relative = path.relative_to(project).as_posix()
            if path.name.endswith(PROVENANCE_SUFFIX):
                record = read_record(path.with_name(path.name.removesuffix(PROVENANCE_SUFFIX)), "an artefact") or {}
                commits[str(record.get("git_commit", "none"))] += 1
                continue
            sha256, size = _sha256_and_size(path)
            listed[relative] = {"sha256": sha256, "size": size, "kind": kind_of(relative)}
            if is_measured(relative):
                listed[relative]["measured"] = True
    return listed, commits


def read_table(path: str | Path) -> list[list[str]]:
    """A CSV table's rows as text, the file opened as a regular file of at most MAX_TABLE_BYTES."""
    data = read_regular(path, MAX_TABLE_BYTES, "a result table")
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    except (UnicodeDecodeError, csv.Error) as err:
        raise InputError(f"{shown(path)}: not a CSV table ({err})") from err
    if not rows:
        raise InputError(f"{shown(path)}: an empty table (no header)")
    return rows


def run_commit(commits: Counter) -> str:
    """The run's commit: the one its artefacts' records name (the most of them where a rerun at another
    commit made some); 'none' where no record names one."""
    named = [(count, commit) for commit, count in commits.items() if commit != "none"]
    return max(named)[1] if named else "none"


def tables(project: Path) -> dict[str, dict]:
    """The rows of each summary table that exists, as text, and the parameters its record gives."""
    found = {}
    for name, relative in TABLES.items():
        path = project / relative
        if path.is_file():
            header, *rows = read_table(path)
            # its step's parameters (verify recomputes a rebuilt run's row with them)
            parameters = (read_record(path, "a summary table") or {}).get("parameters", {})
            found[name] = {"path": relative, "parameters": parameters, "columns": header, "rows": rows}
    return found


def _merge(base: dict, over: dict) -> dict:
    merged = dict(base)
    for key, value in over.items():
        both_mappings = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _merge(merged[key], value) if both_mappings else value
    return merged


SEED_SETTINGS = ("seed", "seeds", "seed_block", "confirmatory_block")


def refuse_bad_seed_settings(config: dict) -> None:
    """The config's seed settings held to the workflow's schema (integers in range, never 10000.0), one
    line naming the key: the rest of the config is the Snakefile's to check."""
    full = schema()
    part = {"type": "object", "properties": {key: full["properties"][key] for key in SEED_SETTINGS},
            "$defs": full["$defs"]}
    for error in strict_validator(part).iter_errors(config):
        key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ConfigError(f"config key '{key}': {error.message[:200]}")


def seed_block(project: Path, scale: str) -> dict[str, object]:
    """The run's seed block and every replicate list it ran: from results/seed_plan.csv where the run
    wrote it (the lists the rules read), else as the config resolves them (core/seed_blocks.py)."""
    plan = project / "results" / "seed_plan.csv"
    if plan.is_file():
        table = load_csv(plan, "the run's seed plan", columns=("list", "seed", "block"))
        blocks = sorted(set(table["block"].astype(str)))
        if len(blocks) != 1:
            raise InputError(f"{plan}: one seed block expected, found {blocks}; rerun rule seed_plan")
        lists = {str(key): [int(seed) for seed in group["seed"]] for key, group in table.groupby("list", sort=False)}
        return {"block": blocks[0], "lists": lists, "from": "results/seed_plan.csv"}
    config = load_yaml(project / "config.yaml", "config file")
    if scale == "smoke":
        config = _merge(config, load_yaml(project / "workflow/profiles/smoke/scale.yaml", "config file"))
    try:
        refuse_bad_seed_settings(config)
        resolved = resolve_seed_block(config, project / "protocol.lock")
    except ConfigError as err:
        raise InputError(f"{project / 'config.yaml'}: {err}") from err
    return {"block": config.get(BLOCK_KEY, EXPLORATORY), "lists": seed_lists(resolved), "from": "config.yaml"}


def manifest(project: Path, scale: str, snakemake_args: list[str]) -> dict:
    listed, commits = artefacts(project)
    if not listed:
        raise InputError(f"{project}: no artefact under {', '.join(FOLDERS)}: nothing to list")
    found = tables(project)
    verdicts = {}
    if "claims" in found:
        columns = found["claims"]["columns"]
        verdicts = {row[columns.index("id")]: row[columns.index("verdict")] for row in found["claims"]["rows"]}
    config = load_yaml(project / "config.yaml", "config file")
    return {
        "format": FORMAT,
        "commit": run_commit(commits),
        "checkout": git_commit(),
        "commits_of_artefacts": dict(sorted(commits.items())),
        "scale": scale,
        "snakemake_args": snakemake_args,
        "seed": config.get("seed"),
        "seed_block": seed_block(project, scale),
        "platform": platform_record(),
        "counts": {"artefacts": len(listed), "measured": sum("measured" in a for a in listed.values()),
                   "provenance_records": sum(commits.values()), "bytes": sum(a["size"] for a in listed.values()),
                   "by_kind": dict(sorted(Counter(a["kind"] for a in listed.values()).items()))},
        "verdicts": verdicts,
        "tables": found,
        "artefacts": listed,
    }


def dumps(record: dict) -> str:
    """JSON with one artefact and one table row a line: a new publication's diff shows what moved."""
    head = {key: value for key, value in record.items() if key not in ("tables", "artefacts")}
    text = json.dumps(head, indent=1)[:-2]
    table_lines = []
    for name, table in record["tables"].items():
        rows = ",\n    ".join(json.dumps(row) for row in table["rows"])
        table_lines.append(f'  {json.dumps(name)}: {{"path": {json.dumps(table["path"])}, '
                           f'"parameters": {json.dumps(table["parameters"], sort_keys=True)}, '
                           f'"columns": {json.dumps(table["columns"])}, "rows": [\n    {rows}]}}')
    artefact_lines = [f"  {json.dumps(path)}: {json.dumps(entry, sort_keys=True)}"
                      for path, entry in record["artefacts"].items()]
    return (text + ',\n "tables": {\n' + ",\n".join(table_lines) + '\n },\n "artefacts": {\n'
            + ",\n".join(artefact_lines) + "\n }\n}\n")


