"""The protocol: what a confirmatory run is judged by, locked in a committed file before the run
(docs/reliability.md, 'Seed blocks and the protocol').

protocol.lock (JSON, written by `make protocol`: rlstudy.report.cli.write_protocol) holds the sha256 of
- claims.yaml, and of each claim's definition (canonical JSON) and of what all claims share (defaults);
- the confirmatory seed plan: every replicate list as config.yaml's confirmatory block resolves it
  (core/seed_blocks.py), as canonical JSON;
- the analysis code: every file ANALYSIS_CODE names (what turns the result tables into verdicts).
The protocol commit is the commit that last changed protocol.lock (git log -1 -- protocol.lock).

render_readme publishes a run's verdicts only against the lock (`judge`): a confirmatory run whose seed
plan, shared claims settings or analysis code differ from the lock, or that predates the protocol commit,
is refused; a claim added or changed after the protocol commit is published apart, as exploratory, with
no verdict; a run of the exploratory block (or one made before the blocks: its seeds are that block's)
is published as exploratory throughout, lock or none.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pandas as pd

from rlstudy.core.config import ConfigError, load_yaml, parse_yaml, validate_config
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv
from rlstudy.core.provenance import read_record, sha256_file
from rlstudy.core.seed_blocks import (BLOCK_KEY, CONFIRMATORY, EXPLORATORY, digest,
                                      resolve_seed_block, seed_block_problems, seed_lists)

LOCK = "protocol.lock"
LOCK_VERSION = 1
# What decides a verdict from the result tables, relative to the project's root: the claims' loading
# and rules, the step that applies them, their statistics, the claims' grammar and the tables the claims
# rule reads. Not the code that measures the runs (that is the study, judged by its own tests), nor this
# module, which judges runs against the lock and decides no verdict. A `*` stays within its folder.
ANALYSIS_CODE = ("src/rlstudy/claims/*.py", "src/rlstudy/claims/cli/evaluate_claims.py",
                 "src/rlstudy/core/statistics.py", "src/rlstudy/core/calibration.py",
                 "workflow/rules/claims.smk", "workflow/schemas/claims.schema.yaml")
SEED_PLAN_TABLE = "seed_plan"  # the claims rule's input naming the run's seed plan (results/seed_plan.csv)
ADDED, CHANGED = "added after the protocol commit", "changed after the protocol commit"


def _matches(path: str, pattern: str) -> bool:
    candidate, wanted = PurePosixPath(path), PurePosixPath(pattern)
    return candidate.parent == wanted.parent and fnmatch.fnmatchcase(candidate.name, wanted.name)


def analysis_files(paths) -> list[str]:
    """Of these repository paths, the analysis code's (ANALYSIS_CODE), sorted."""
    return sorted({path for path in paths if any(_matches(path, pattern) for pattern in ANALYSIS_CODE)})


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True)
    except OSError as err:
        raise InputError(f"cannot run git in {root}: {err.strerror or err}") from err


def analysis_code(root: Path, commit: str | None = None) -> dict[str, str]:
    """path -> sha256 of every analysis file, in the checkout (`commit` None) or at a commit."""
    if commit is None:
        found = [str(p.relative_to(root).as_posix()) for pattern in ANALYSIS_CODE for p in root.glob(pattern)]
        return {path: sha256_file(root / path) for path in analysis_files(found)}
    listed = _git(root, "ls-tree", "-r", "--name-only", commit)
    if listed.returncode != 0:
        raise InputError(f"commit {commit[:12]}: not in this repository (git ls-tree); cannot read its analysis code")
    code = {}
    for path in analysis_files(listed.stdout.decode().splitlines()):
        shown = _git(root, "show", f"{commit}:{path}")
        code[path] = hashlib.sha256(shown.stdout).hexdigest()
    return code


def claims_digests(claims: dict) -> tuple[str, dict[str, str]]:
    """(the digest of what every claim shares: the file less its claims, e.g. the defaults; each claim's
    digest by id), of canonical JSON: a comment or a blank line moves neither."""
    shared = {key: value for key, value in claims.items() if key != "claims"}
    return digest(shared), {claim["id"]: digest(claim) for claim in claims.get("claims", [])}


def confirmatory_seed_plan(config: dict) -> dict[str, list[int]]:
    """Every replicate list as the config's confirmatory block resolves it (refused where the block is
    not sound: counts that miss a list, a seed shared with the exploratory block)."""
    problems = seed_block_problems({**config, BLOCK_KEY: CONFIRMATORY})
    if problems:
        raise InputError(problems[0])
    return seed_lists(resolve_seed_block({**config, BLOCK_KEY: CONFIRMATORY}))


def make_lock(root: Path, claims_file: Path, config_file: Path, config_schema: Path) -> dict:
    """The lock of this checkout: its claims, its config's confirmatory seed plan, its analysis code."""
    try:
        claims = load_yaml(claims_file, "claims file")
        config = load_yaml(config_file, "config file")
        validate_config(config, config_schema)
    except ConfigError as err:
        raise InputError(str(err)) from err
    shared, each = claims_digests(claims)
    plan = confirmatory_seed_plan(config)
    code = analysis_code(root)
    return {
        "protocol": LOCK_VERSION,
        "about": "the claims, the confirmatory seed plan and the analysis code a confirmatory run is judged by; "
                 "written by make protocol, committed before the run (docs/reliability.md)",
        "claims_file": {"path": str(claims_file), "sha256": sha256_file(claims_file)},
        "claims_shared_sha256": shared,
        "claims": each,
        "seed_plan_sha256": digest(plan),
        "seed_plan": plan,
        "analysis_code_sha256": digest(code),
        "analysis_code": code,
    }


def lock_text(lock: dict) -> str:
    return json.dumps(lock, indent=1, sort_keys=True) + "\n"


def read_lock(path: Path) -> dict:
    try:
        lock = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"{path}: no protocol; a confirmatory run is published against a protocol committed "
                         "before it (make protocol, then commit protocol.lock)") from None
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise InputError(f"{path}: not a protocol lock ({getattr(err, 'strerror', None) or err})") from err
    keys = ("protocol", "claims_shared_sha256", "claims", "seed_plan_sha256", "analysis_code")
    if not isinstance(lock, dict) or lock.get("protocol") != LOCK_VERSION or not all(k in lock for k in keys):
        raise InputError(f"{path}: not a protocol lock of version {LOCK_VERSION}; write it again with make protocol")
    return lock


def protocol_commit(root: Path, lock: Path, any_results: bool) -> str:
    """The commit that last changed the lock; the lock must be committed as it is (unless any_results)."""
    found = _git(root, "log", "-1", "--format=%H", "--", str(lock))
    commit = found.stdout.decode().strip() if found.returncode == 0 else ""
    dirty = _git(root, "status", "--porcelain", "--", str(lock)).stdout.decode().strip()
    if (not commit or dirty) and not any_results:
        raise InputError(f"{lock}: not committed as it is; the protocol is the commit that last changed it "
                         "(git log -1 -- protocol.lock): commit it before the confirmatory run")
    return commit or "uncommitted"


@dataclass
class RunSeeds:
    block: str
    plan: dict[str, list[int]] | None  # None: a run made before the seed blocks (its seeds: the exploratory block's)


def _inputs(table: str) -> dict:
    """The inputs a table's provenance record names (none where it has no record)."""
    record = read_record(table, "its provenance record") or {}
    inputs = record.get("inputs") if isinstance(record, dict) else None
    return inputs if isinstance(inputs, dict) else {}


def run_seeds(claims_table: str) -> RunSeeds:
    """The seed block and lists of the run that made a claims table, from its record's seed plan input."""
    entry = _inputs(claims_table).get(SEED_PLAN_TABLE)
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        return RunSeeds(EXPLORATORY, None)
    path = entry["path"]
    plan_table = load_csv(path, "the run's seed plan", columns=("list", "seed", "block"))
    if sha256_file(path) != entry.get("sha256"):
        raise InputError(f"{path}: not the seed plan {claims_table} was computed from (its sha256 differs); "
                         "rerun rule claims")
    blocks = set(plan_table["block"])
    if len(blocks) != 1 or not blocks <= {EXPLORATORY, CONFIRMATORY}:
        raise InputError(f"{path}: names the seed blocks {sorted(map(str, blocks))}, not one of "
                         f"{[EXPLORATORY, CONFIRMATORY]}")
    plan = {str(key): [int(seed) for seed in rows["seed"]] for key, rows in plan_table.groupby("list", sort=False)}
    return RunSeeds(blocks.pop(), plan)


def seed_plan_table(block: str, plan: dict[str, list[int]]) -> pd.DataFrame:
    """results/seed_plan.csv: one row per list and seed, and the block (rlstudy.report.cli.record_seed_plan)."""
    rows = [(key, seed, block) for key, seeds in plan.items() for seed in seeds]
    return pd.DataFrame(rows, columns=["list", "seed", "block"])


def _run_claims(root: Path, entry: dict, commit: str, checkout_file: Path) -> dict:
    """The claims file the run evaluated (its record's sha256): this checkout's, or the one at its commit."""
    wanted = entry.get("sha256") if isinstance(entry, dict) else None
    if checkout_file.is_file() and sha256_file(checkout_file) == wanted:
        return load_yaml(checkout_file, "claims file")
    path = entry.get("path") if isinstance(entry, dict) else None
    shown = _git(root, "show", f"{commit}:{path}") if isinstance(path, str) else None
    if shown is None or shown.returncode != 0 or hashlib.sha256(shown.stdout).hexdigest() != wanted:
        raise InputError(f"the claims file the run evaluated (sha256 {str(wanted)[:12]}) is neither {checkout_file} "
                         f"nor {path} at its commit {commit[:12]}; rerun rule claims")
    return parse_yaml(shown.stdout.decode(), f"{path} at {commit[:12]}", "claims file")


@dataclass
class Standing:
    """How a run's verdicts are published: its block; against which protocol; the claims set apart."""
    block: str
    protocol: str | None = None                               # the protocol commit (a confirmatory run)
    apart: dict[str, str] = field(default_factory=dict)       # claim id -> why it is exploratory (no verdict)
    locked_not_run: list[str] = field(default_factory=list)   # claims the lock holds that the run has not
    plan: dict[str, list[int]] | None = None                  # the run's seed lists (None: made before the blocks)

    @property
    def confirmatory(self) -> bool:
        return self.block == CONFIRMATORY


def judge(root: Path, claims_table: str, run_commit: str, claims_file: Path, checkout_claims: dict,
          lock_path: Path, any_results: bool = False) -> Standing:
    """The run's standing against the lock (the module's docstring); a one-line InputError where its
    verdicts may not be published."""
    seeds = run_seeds(claims_table)
    if seeds.block == EXPLORATORY:
        return Standing(EXPLORATORY, plan=seeds.plan)
    lock = read_lock(lock_path)
    protocol = protocol_commit(root, lock_path, any_results)
    clean = len(run_commit) == 40 and all(c in "0123456789abcdef" for c in run_commit)
    if clean and protocol != "uncommitted" and _git(root, "merge-base", "--is-ancestor", protocol, run_commit).returncode:
        raise InputError(f"{claims_table}: made at commit {run_commit[:12]}, before the protocol commit {protocol[:12]} "
                         f"({lock_path}); a confirmatory run follows its protocol: rerun it")
    if digest(seeds.plan) != lock["seed_plan_sha256"]:
        differing = sorted(set(seeds.plan) ^ set(lock.get("seed_plan") or {})) or sorted(
            key for key in seeds.plan if seeds.plan[key] != (lock.get("seed_plan") or {}).get(key))
        raise InputError(f"{claims_table}: its seed plan differs from the protocol's ({lock_path}, commit "
                         f"{protocol[:12]}) at {differing[:3] or 'its lists'}; run the protocol's confirmatory block")
    run_claims = _run_claims(root, _inputs(claims_table).get("claims"), run_commit, claims_file)
    shared, run_each = claims_digests(run_claims)
    if shared != lock["claims_shared_sha256"]:
        raise InputError(f"{claims_table}: its claims' shared settings (the defaults: levels, sizes) differ from the "
                         f"protocol's ({lock_path}, commit {protocol[:12]}); write a new protocol before a new run")
    code = analysis_code(root, run_commit if clean else None)
    changed = sorted(set(code) ^ set(lock["analysis_code"])) + sorted(
        path for path in code if path in lock["analysis_code"] and code[path] != lock["analysis_code"][path])
    if changed:
        raise InputError(f"{claims_table}: the analysis code of its commit differs from the protocol's ({lock_path}, "
                         f"commit {protocol[:12]}) in {changed[0]}; write a new protocol before a new run")
    _, checkout_each = claims_digests(checkout_claims)
    apart = {}
    for claim, run_digest in run_each.items():
        locked = lock["claims"].get(claim)
        if locked is None:
            apart[claim] = ADDED
        elif run_digest != locked or checkout_each.get(claim, locked) != locked:
            apart[claim] = CHANGED
    verdicts = set(load_csv(claims_table, "the claims' verdicts", columns=("id",))["id"].astype(str))
    locked_not_run = [claim for claim in lock["claims"] if claim not in verdicts]
    return Standing(CONFIRMATORY, protocol, apart, locked_not_run, seeds.plan)


def block_note(standing: Standing) -> str:
    """The line every generated block of the study pages opens with: the seed block of its run."""
    if standing.confirmatory:
        return (f"Seed block: confirmatory (fresh seeds, under the protocol of commit {standing.protocol}; "
                "`results/seed_plan.csv`).")
    before = ", made before the seed blocks" if standing.plan is None else ""
    return f"Seed block: exploratory{before} (the seeds the study was developed and tuned on)."


def foreign_seeds(table: pd.DataFrame, standing: Standing) -> list[int]:
    """Seeds of a table's `seed` column that are not of its run's seed plan (none to check: a table without
    the column, or a run made before the blocks)."""
    if standing.plan is None or "seed" not in table.columns:
        return []
    planned = {seed for seeds in standing.plan.values() for seed in seeds}
    return sorted({int(seed) for seed in pd.to_numeric(table["seed"], errors="coerce").dropna()} - planned)
