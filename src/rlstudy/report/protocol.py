"""The protocol: what a confirmatory run is judged by, locked in a committed file before the run
(docs/reliability.md, 'Seed blocks and the protocol').

protocol.lock (JSON, written by `make protocol`: rlstudy.report.cli.write_protocol) holds what decides
a verdict (report/lock.py says what: version 2). The first protocol's lock (version 1) held the claims,
the seed plan and the files of a few folders (PROTOCOL_1_CODE); a run made under it is still judged by
it. The protocol a run is judged by is the lock of the run's commit, and the protocol commit the commit
that last changed it before the run (git log -1 <run> -- protocol.lock): a later protocol leaves the
runs of an earlier one judged as they were.

render_readme publishes a run's verdicts only against its lock (`judge`): a confirmatory run whose seed
plan (under a group-sequential design: the lock's lists cut where its looks stopped them, the looks
finished), shared claims settings, config values the claims read or verdict code differ from the lock, or that
predates any protocol, is refused, naming what differs; a claim added or changed after the protocol commit
is published apart, as exploratory, with no verdict; a run of the exploratory block (or one made before
the blocks: its seeds are that block's) is published as exploratory throughout, lock or none.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pandas as pd

from rlstudy.core.config import ConfigError, load_yaml, parse_yaml
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv
from rlstudy.core.looks import LOOKS_DIR, design_lists, look_state
from rlstudy.core.provenance import read_record, sha256_file
from rlstudy.core.regular_files import read_regular
from rlstudy.core.seed_blocks import CONFIRMATORY, EXPLORATORY, MAX_LOCK_BYTES, digest
from rlstudy.report.lock import LOCK, LOCK_VERSION, claim_config, claims_digests

LOCK_VERSIONS = (1, LOCK_VERSION)
# The first protocol's analysis code: the files these patterns matched (a `*` stays within its folder).
PROTOCOL_1_CODE = ("src/rlstudy/claims/*.py", "src/rlstudy/claims/cli/evaluate_claims.py",
                   "src/rlstudy/core/statistics.py", "src/rlstudy/core/calibration.py",
                   "workflow/rules/claims.smk", "workflow/schemas/claims.schema.yaml")
CONFIG = "config.yaml"  # the config a run's claims read, at the run's commit
SEED_PLAN_TABLE = "seed_plan"  # the claims rule's input naming the run's seed plan (results/seed_plan.csv)
ADDED, CHANGED = "added after the protocol commit", "changed after the protocol commit"


def _matches(path: str, pattern: str) -> bool:
    candidate, wanted = PurePosixPath(path), PurePosixPath(pattern)
    return candidate.parent == wanted.parent and fnmatch.fnmatchcase(candidate.name, wanted.name)


def protocol_1_files(paths) -> list[str]:
    """Of these repository paths, the first protocol's analysis code (PROTOCOL_1_CODE), sorted."""
    return sorted({path for path in paths if any(_matches(path, pattern) for pattern in PROTOCOL_1_CODE)})


def run_git(root: Path, *args: str) -> subprocess.CompletedProcess:
    """git in the repository of root, its output captured; an InputError where git cannot run."""
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True)
    except OSError as err:
        raise InputError(f"cannot run git in {root}: {err.strerror or err}") from err


def _show(root: Path, commit: str | None, path: str) -> bytes | None:
    """A file's bytes in the checkout (`commit` None) or at a commit; None where it is not there."""
    if commit is None:
        try:
            return (root / path).read_bytes()
        except OSError:
            return None
    shown = run_git(root, "show", f"{commit}:{path}")
    return shown.stdout if shown.returncode == 0 else None


def analysis_code(root: Path, lock: dict, commit: str | None = None) -> dict[str, str]:
    """path -> sha256 of the files the lock's analysis code names (version 1: matches its patterns), in the
    checkout (`commit` None) or at a commit."""
    if lock["protocol"] == 1:
        if commit is None:
            paths = [p.relative_to(root).as_posix() for pattern in PROTOCOL_1_CODE for p in root.glob(pattern)]
        else:
            listed = run_git(root, "ls-tree", "-r", "--name-only", commit)
            if listed.returncode != 0:
                raise InputError(f"commit {commit[:12]}: not in this repository (git ls-tree); cannot read its code")
            paths = listed.stdout.decode().splitlines()
        paths = protocol_1_files(paths)
    else:
        paths = sorted(lock["analysis_code"])
    shown = {path: _show(root, commit, path) for path in paths}
    return {path: hashlib.sha256(data).hexdigest() for path, data in shown.items() if data is not None}


def lock_text(lock: dict) -> str:
    return json.dumps(lock, indent=1, sort_keys=True) + "\n"


def parse_lock(text: bytes | str, where: str) -> dict:
    """A lock of a known version, its fields of the expected types (a lock read back is data)."""
    try:
        lock = json.loads(text)
    except (UnicodeDecodeError, ValueError) as err:
        raise InputError(f"{where}: not a protocol lock ({err})") from err
    keys = {"claims_shared_sha256": str, "claims": dict, "seed_plan_sha256": str, "seed_plan": dict,
            "analysis_code": dict}
    if lock.get("protocol") == LOCK_VERSION if isinstance(lock, dict) else False:
        keys["config_values"] = dict
    if (not isinstance(lock, dict) or lock.get("protocol") not in LOCK_VERSIONS
            or not all(isinstance(lock.get(key), kind) for key, kind in keys.items())
            or not all(isinstance(v, str) for v in [*lock["analysis_code"], *lock["analysis_code"].values()])):
        raise InputError(f"{where}: not a protocol lock of version {list(LOCK_VERSIONS)}; write it again with "
                         "make protocol")
    return lock


def read_lock(path: Path) -> dict:
    if not os.path.lexists(path):
        raise InputError(f"{path}: no protocol; a confirmatory run is published against a protocol committed "
                         "before it (make protocol, then commit protocol.lock)")
    return parse_lock(read_regular(path, MAX_LOCK_BYTES, "a protocol lock"), str(path))


def protocol_commit(root: Path, lock: Path, any_results: bool) -> str:
    """The commit that last changed the lock; the lock must be committed as it is (unless any_results)."""
    found = run_git(root, "log", "-1", "--format=%H", "--", str(lock))
    commit = found.stdout.decode().strip() if found.returncode == 0 else ""
    dirty = run_git(root, "status", "--porcelain", "--", str(lock)).stdout.decode().strip()
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
    shown = run_git(root, "show", f"{commit}:{path}") if isinstance(path, str) else None
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


def lock_of_run(root: Path, lock_path: Path, run_commit: str | None, claims_table: str,
                any_results: bool) -> tuple[dict, str]:
    """The lock a run is judged by and its protocol commit: the lock of the run's commit (`run_commit` a
    clean commit), else the checkout's; a run made before any protocol is refused."""
    checkout_lock = read_lock(lock_path)
    protocol = protocol_commit(root, lock_path, any_results)
    if run_commit is None or protocol == "uncommitted":
        return checkout_lock, protocol
    try:
        relative = lock_path.resolve().relative_to(root.resolve()).as_posix() if lock_path.is_absolute() else str(lock_path)
    except ValueError:
        raise InputError(f"{lock_path}: not inside the repository {root}; the protocol is a committed lock") from None
    found = run_git(root, "log", "-1", "--format=%H", run_commit, "--", relative)
    at_run = found.stdout.decode().strip() if found.returncode == 0 else ""
    shown = _show(root, run_commit, relative) if at_run else None
    if shown is None:
        raise InputError(f"{claims_table}: made at commit {run_commit[:12]}, before the protocol commit {protocol[:12]} "
                         f"({lock_path}); a confirmatory run follows its protocol: rerun it")
    return parse_lock(shown, f"{relative} at {run_commit[:12]}"), at_run


def config_at(root: Path, commit: str | None) -> dict:
    """config.yaml of the checkout (`commit` None) or at a commit, read by the strict loader; an InputError
    naming it where it is not there or not of the loader's form."""
    shown = _show(root, commit, CONFIG)
    where = f"{CONFIG} at {commit[:12]}" if commit else str(root / CONFIG)
    if shown is None:
        raise InputError(f"{where}: not found")
    try:
        return parse_yaml(shown.decode(), where, "config file") or {}
    except (ConfigError, UnicodeDecodeError) as err:
        raise InputError(f"{where}: {err}") from err


def config_differences(locked: dict, run: dict) -> list[str]:
    """The config keys a claim reads whose values differ between the lock and the run (one line each)."""
    return [f"{key} ({locked.get(key, 'absent')!r} locked, {run.get(key, 'absent')!r} run)"
            for key in sorted(set(locked) | set(run)) if locked.get(key) != run.get(key)]


def looked_plan(lock: dict, looks: Path, claims_table: str) -> tuple[dict[str, list[int]], str]:
    """The seeds the protocol's run ran and their digest: the lock's plan, or where its design's looks were
    made under `looks`, each list of the design cut to its count when the looks finished (refused while a
    list continues)."""
    plan = lock.get("seed_plan") or {}
    lists = design_lists(lock.get("design") or {})
    try:
        state = look_state(lists, looks) if lists else None
    except ConfigError as err:
        raise InputError(str(err)) from err
    if state is None or not state.made:
        return plan, lock["seed_plan_sha256"]
    if state.current is not None:
        raise InputError(f"{claims_table}: the design's looks have not finished (look {state.current} is next, "
                         f"{looks}); run make figures to its end before the verdicts are published")
    cut = {key: seeds[:state.counts[key]] if key in state.counts else seeds for key, seeds in plan.items()}
    return cut, digest(cut)


def judge(root: Path, claims_table: str, run_commit: str, claims_file: Path, checkout_claims: dict,
          lock_path: Path, any_results: bool = False) -> Standing:
    """The run's standing against its lock (the module's docstring); a one-line InputError where its
    verdicts may not be published."""
    seeds = run_seeds(claims_table)
    if seeds.block == EXPLORATORY:
        return Standing(EXPLORATORY, plan=seeds.plan)
    clean = len(run_commit) == 40 and all(c in "0123456789abcdef" for c in run_commit)
    lock, protocol = lock_of_run(root, lock_path, run_commit if clean else None, claims_table, any_results)
    if clean and protocol != "uncommitted" and run_git(root, "merge-base", "--is-ancestor", protocol, run_commit).returncode:
        raise InputError(f"{claims_table}: made at commit {run_commit[:12]}, before the protocol commit {protocol[:12]} "
                         f"({lock_path}); a confirmatory run follows its protocol: rerun it")
    planned, planned_sha = looked_plan(lock, root / LOOKS_DIR, claims_table)
    if digest(seeds.plan) != planned_sha:
        differing = sorted(set(seeds.plan) ^ set(planned)) or sorted(
            key for key in seeds.plan if seeds.plan[key] != planned.get(key))
        raise InputError(f"{claims_table}: its seed plan differs from the protocol's ({lock_path}, commit "
                         f"{protocol[:12]}) at {differing[:3] or 'its lists'}; run the protocol's confirmatory block")
    run_claims = _run_claims(root, _inputs(claims_table).get("claims"), run_commit, claims_file)
    shared, run_each = claims_digests(run_claims)
    if shared != lock["claims_shared_sha256"]:
        raise InputError(f"{claims_table}: its claims' shared settings (the defaults: levels, sizes) differ from the "
                         f"protocol's ({lock_path}, commit {protocol[:12]}); write a new protocol before a new run")
    if lock["protocol"] >= 2:
        try:
            run_config = config_at(root, run_commit if clean else None)
        except InputError as err:
            raise InputError(f"{err}; the config values the claims read are judged against the protocol") from err
        moved = config_differences(lock["config_values"], claim_config(run_config))
        if moved:
            raise InputError(f"{claims_table}: a config value the claims read differs from the protocol's ({lock_path}, "
                             f"commit {protocol[:12]}): {moved[0]}; write a new protocol before a new run")
    code = analysis_code(root, lock, run_commit if clean else None)
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
