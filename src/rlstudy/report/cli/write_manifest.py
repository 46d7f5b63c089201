"""The manifest of a run: what was published, and the platform that rounded it (issue 41).

Every artefact under data/, results/ and figures/ with its sha256, size and kind (provenance records
aside: they are counted, not listed, since they name the commit; measured files, the wall times and the
figure drawn from them, marked `measured`); the rows of every summary table the claims read (final
errors, returns: the key numbers of every run, as the files hold them) and the verdicts; the commit
of the checkout and the commits the artefacts' records name; the master seed and every seed list of
the config; the scale; and the platform: CPU model and the instruction-set flags that decide which
BLAS kernels run, the BLAS NumPy and PyTorch use (OpenBLAS's core type, OPENBLAS_CORETYPE, MKL's
switches, torch.__config__.show()), the library versions. `make readme` writes it as
docs/manifest.json; `make verify` (rlstudy.report.cli.verify) rebuilds part of the run and compares.

    python -m rlstudy.report.cli.write_manifest --scale paper --out docs/manifest.json
"""

from __future__ import annotations

import csv
import json
import os
import platform
import re
import shlex
from collections import Counter
from pathlib import Path

from rlstudy.core.cli import parser, run
from rlstudy.core.config import ConfigError, load_yaml
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import write_artefact
from rlstudy.core.loaders import load_csv
from rlstudy.core.provenance import git_commit, package_versions, PROVENANCE_SUFFIX, read_record, sha256_file
from rlstudy.core.seed_blocks import BLOCK_KEY, EXPLORATORY, resolve_seed_block, seed_lists

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
# What an artefact is, by path (the first pattern that matches): verify's tolerance across platforms
# is per kind (verify.CROSS_PLATFORM).
KINDS = (
    (r"^figures/", "figure"),
    (r"^data/trajectories/authors/|^data/reference/authors/", "authors-import"),
    (r"^data/trajectories/", "trajectory"),
    (r"^results/exact/", "exact"),
    (r"^results/reference/error_exact\.csv$", "reference-error"),
    (r"^results/reference/", "reference"),
    (r"^results/agents/qtable/", "tabular-agent"),
    (r"^results/agents/[^/]+/", "agent"),
    (r"^results/(runs|sweep)/[^/]+/", "run"),
    (r"^(data|results)/offline/", "offline"),
    (r"", "table"),
)
# The instruction sets whose presence decides the kernels OpenBLAS, MKL and PyTorch pick.
BLAS_FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
              "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8")
# Thread counts aside: Snakemake sets them per job (each record has its own), not the machine.
BLAS_ENVIRONMENT = ("OPENBLAS_CORETYPE", "MKL_CBWR",
                    "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE", "ATEN_CPU_CAPABILITY")
LIBRARIES = ("torch", "numpy", "scipy", "pandas", "matplotlib", "seaborn", "gymnasium", "ale-py", "numba",
             "llvmlite", "pillow", "opencv-python-headless", "snakemake")


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


def tables(project: Path) -> dict[str, dict]:
    """The rows of each summary table that exists, as text, and the parameters its record gives."""
    found = {}
    for name, relative in TABLES.items():
        path = project / relative
        if path.is_file():
            with open(path, newline="") as f:
                header, *rows = list(csv.reader(f))
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
        resolved = resolve_seed_block(config)
    except ConfigError as err:
        raise InputError(f"{project / 'config.yaml'}: {err}") from err
    return {"block": config.get(BLOCK_KEY, EXPLORATORY), "lists": seed_lists(resolved), "from": "config.yaml"}


def _cpu() -> dict[str, object]:
    model = vendor = platform.processor() or "unknown"
    flags: set[str] = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key == "model name":
                model = value
            elif key == "vendor_id":
                vendor = value
            elif key == "flags":
                flags = set(value.split())
    except OSError:
        pass
    return {"model": model, "vendor": vendor, "blas_flags": [f for f in BLAS_FLAGS if f in flags],
            "cores": os.cpu_count()}


def platform_record() -> dict[str, object]:
    """What decides the rounding of this machine's products, as this process sees it; the `rounding`
    part is what verify compares to tell the same platform from another."""
    import numpy as np
    import torch

    from rlstudy.core.process import openblas_kernels

    numpy_config = np.show_config(mode="dicts") or {}
    numpy_blas = numpy_config.get("Build Dependencies", {}).get("blas", {})
    versions = package_versions(LIBRARIES)
    cpu = _cpu()
    rounding = {
        "machine": f"{platform.system()} {platform.machine()}",
        "cpu_vendor": cpu["vendor"],
        "cpu_model": cpu["model"],
        "blas_flags": cpu["blas_flags"],
        "numpy_blas": f"{numpy_blas.get('name', 'unknown')} {numpy_blas.get('version', '')}".strip(),
        "openblas_kernels": openblas_kernels(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_mkl": bool(torch.backends.mkl.is_available()),
        "environment": {name: os.environ[name] for name in BLAS_ENVIRONMENT if name in os.environ},
        "versions": versions,
    }
    return {"rounding": rounding, "cores": cpu["cores"], "torch_config": torch.__config__.show().splitlines()}


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
        "commit": git_commit(),
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


def load_manifest(path: str | Path) -> dict:
    try:
        record = json.loads(Path(path).read_text())
    except OSError as err:
        raise InputError(f"cannot read the manifest {path}: {err.strerror or err}") from err
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not a manifest (invalid JSON: {err})") from err
    if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("artefacts"), dict):
        raise InputError(f"{path}: not a manifest of format {FORMAT} (rlstudy.report.cli.write_manifest)")
    return record


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--project", default=".", help="the checkout whose data/, results/ and figures/ are listed")
    p.add_argument("--scale", required=True, choices=["paper", "smoke"],
                   help="the profile the run was made with: verify rebuilds with the same")
    p.add_argument("--snakemake-args", default="",
                   help="the run's further Snakemake options (e.g. --config authors_data=...): verify repeats them")
    p.add_argument("--out", default="docs/manifest.json", help="where the manifest goes")
    args = p.parse_args()
    record = manifest(Path(args.project), args.scale, shlex.split(args.snakemake_args))
    write_artefact(args.out, dumps(record).encode(), None)
    counts = record["counts"]
    print(f"{args.out}: {counts['artefacts']} artefacts ({counts['measured']} measured, {counts['bytes']} bytes), "
          f"{counts['provenance_records']} provenance records, {len(record['verdicts'])} verdicts")


if __name__ == "__main__":
    run(main)
