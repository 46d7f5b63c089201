"""What protocol.lock holds (version 2, written by `make protocol`): everything that decides a verdict.

- the claims: claims.yaml's sha256, each claim's digest and the digest of what they share (levels,
  families, planning);
- the config values the claims read (`claim_config`): each agent's bar (`solved_return`) and episode
  count, the equal-cost bound, the confirmatory seed counts per list;
- the verdict step's code (`verdict_code`): every file `python -m rlstudy.claims.cli.evaluate_claims`
  and the looks' step `rlstudy.claims.cli.decide_look` execute (core/sources.py computes the import
  closure), their rules, the claims' schema and the earlier protocols' publications whose verdicts
  carried claims keep (docs/publications/), listed by path, so that code can move between protocols
  without voiding what a lock meant;
- the group-sequential design (report/design.py), fixed before any of its data;
- the confirmatory seeds, derived from the sha256 of all of the above (`derived_start`): no one can have
  run them before the lock existed; a block already run (spent_blocks.yaml) is refused.
"""

from __future__ import annotations

from pathlib import Path

from rlstudy.claims.publication import publications_in
from rlstudy.core.config import ConfigError, load_yaml, validate_config
from rlstudy.core.errors import InputError
from rlstudy.core.provenance import sha256_file
from rlstudy.core.seed_blocks import (BLOCK_KEY, CONFIRMATORY, CONFIRMATORY_KEY, LOCKED_START, derived_start, digest,
                                      plan_from, read_spent, seed_block_problems, spent_problems)
from rlstudy.core.sources import module_sources

LOCK = "protocol.lock"
LOCK_VERSION = 2
SPENT = "spent_blocks.yaml"
VERDICT_STEP = "rlstudy.claims.cli.evaluate_claims"
# The step that decides the group-sequential design's looks, whose last look claims.csv reads (core/looks.py).
LOOK_STEP = "rlstudy.claims.cli.decide_look"
# What the verdict steps read beside their Python: their rules (the tables they are given) and the claims' grammar.
VERDICT_RULE_FILES = ("workflow/rules/claims.smk", "workflow/rules/looks.smk", "workflow/schemas/claims.schema.yaml")
# The config values the claims read through the result tables: the agents' bars and episode counts (the
# agents' summary: solved_return, evaluation_episodes; the offline summary: offline.evaluation_episodes), the bound the cost table counts evaluations to
# (summary.converged_below); and every confirmatory seed count (the n of every test).
CLAIM_CONFIG_ENDINGS = ("solved_return", "evaluation_episodes", "eval_episodes")
CLAIM_CONFIG_KEYS = ("summary.converged_below",)
# The fields the seeds are derived from the digest of: all but the seeds themselves.
SEED_FIELDS = ("seed_start", "seed_plan", "seed_plan_sha256", "seed_source_sha256")


def verdict_code(root: Path) -> dict[str, str]:
    """path -> sha256 of every file that decides a verdict from the result tables, in a checkout."""
    src = root / "src"
    try:
        # parsed afresh: the lock is what vouches for the verdict code, so it trusts no cache of the tree's imports
        modules = sorted({path for step in (VERDICT_STEP, LOOK_STEP) for path in module_sources(step, src, kept=False)})
    except ValueError as err:
        raise InputError(f"--root {root}: {err}; no verdict step to lock") from err
    paths = [path.relative_to(root).as_posix() for path in modules]
    paths += [path for path in VERDICT_RULE_FILES if (root / path).is_file()]
    paths += publications_in(root)  # locked as the code is: a changed carried verdict voids the lock
    return {path: sha256_file(root / path) for path in sorted(paths)}


def _flatten(value, path: tuple[str, ...]) -> dict[str, object]:
    found: dict[str, object] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            found.update(_flatten(item, (*path, str(key))))
    else:
        found[".".join(path)] = value
    return found


def claim_config(config: dict) -> dict[str, object]:
    """The config values a claim reads (CLAIM_CONFIG_ENDINGS, CLAIM_CONFIG_KEYS, the confirmatory counts),
    by their dotted keys."""
    flat = _flatten(config, ())
    chosen = {key: value for key, value in flat.items()
              if key.rpartition(".")[2] in CLAIM_CONFIG_ENDINGS or key in CLAIM_CONFIG_KEYS
              or key.startswith(f"{CONFIRMATORY_KEY}.counts.")}
    return dict(sorted(chosen.items()))


def claims_digests(claims: dict) -> tuple[str, dict[str, str]]:
    """(the digest of what every claim shares: the file less its claims, e.g. the defaults; each claim's
    digest by id), of canonical JSON: a comment or a blank line moves neither."""
    shared = {key: value for key, value in claims.items() if key != "claims"}
    return digest(shared), {claim["id"]: digest(claim) for claim in claims.get("claims", [])}


def seeded(lock: dict, counts: dict[str, int]) -> dict:
    """The lock with its confirmatory seeds: the start derived from the digest of everything else."""
    source = digest({key: value for key, value in lock.items() if key not in SEED_FIELDS})
    plan = plan_from(counts, derived_start(source))
    return {**lock, "seed_source_sha256": source, "seed_start": derived_start(source), "seed_plan": plan,
            "seed_plan_sha256": digest(plan)}


def make_lock(root: Path, claims_file: Path, config_file: Path, config_schema: Path,
              spent_file: Path | None = None, design=None, refuse_spent: bool = True) -> dict:
    """The lock of this checkout. `design(claims, config)` -> the design to fix in it (report/design.py);
    refused where the config's block is not `start: protocol` or (`refuse_spent`: a lock to write, not one
    compared with the committed lock, whose seeds are spent once its run began) its seeds are spent."""
    try:
        claims = load_yaml(claims_file, "claims file")
        config = load_yaml(config_file, "config file")
        validate_config(config, config_schema)
        spent = read_spent(spent_file or root / SPENT)
    except ConfigError as err:
        raise InputError(str(err)) from err
    block = config.get(CONFIRMATORY_KEY) or {}
    if block.get("start") != LOCKED_START:
        raise InputError(f"{config_file}: config key '{CONFIRMATORY_KEY}.start' is {block.get('start')!r}; a protocol's "
                         f"seeds are derived from its lock: set it to {LOCKED_START!r}")
    shared, each = claims_digests(claims)
    code = verdict_code(root)
    lock = seeded({
        "protocol": LOCK_VERSION,
        "about": "what decides a verdict (the claims, the config values they read, the verdict step's code, "
                 "the design) and the confirmatory seeds derived from them; written by make protocol, "
                 "committed before the run (docs/reliability.md)",
        "claims_file": {"path": str(claims_file), "sha256": sha256_file(claims_file)},
        "claims_shared_sha256": shared,
        "claims": each,
        "config_values": claim_config(config),
        "analysis_code": code,
        "analysis_code_sha256": digest(code),
        "design": design(claims, config) if design is not None else {},
    }, block.get("counts") or {})
    counts = block.get("counts") or {}
    problems = [f"{config_file}: config key '{CONFIRMATORY_KEY}.counts.{key}' is {counts.get(key)}, but the design's "
                f"maximum for it is {planned['maximum']}: set the count to it (the block holds every seed a look may use)"
                for key, planned in (lock["design"].get("lists") or {}).items() if counts.get(key) != planned["maximum"]]
    problems += (spent_problems(lock["seed_plan"], spent) if refuse_spent else []) + seed_block_problems(
        {**config, BLOCK_KEY: CONFIRMATORY}, None, lock["seed_plan"])
    if problems:
        raise InputError(problems[0])
    return lock
