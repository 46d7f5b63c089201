"""The two blocks of replicate seeds (docs/reliability.md, 'Seed blocks and the protocol').

Every replicate seed list of the config (any key named `seeds`: SGD's per task, each CBO setting's,
the sweep's, each agent's, MPO's, the offline study's) belongs to one of two blocks:

- exploratory: the lists as config.yaml writes them, the seeds the study was developed, tuned and
  its claims written on (the sweep's are tuning seeds);
- confirmatory: seeds never run before, drawn by one rule from `confirmatory_block`:
  seed i of a list is `start + i`, of the tuning list (the sweep's) `start + TUNING_OFFSET + i`.
  `start: protocol` (config.yaml's) takes the lists from the committed protocol.lock, whose start
  make protocol derives from the lock's own digest (`derived_start`): no one can know those seeds,
  let alone run them, before the lock exists. A block already run is recorded in spent_blocks.yaml
  and refused for a new protocol (`spent_problems`).
  Counts are at most MAX_COUNT (the schema's bound), so a list's confirmatory seeds lie in
  [start, start + MAX_COUNT) or [start + TUNING_OFFSET, start + 2 * TUNING_OFFSET): the study's
  never meet the sweep's, and every list of the study starts at the same seed, as the exploratory
  lists all start at 0 (paired tests pair runs by seed). That they meet no exploratory or tuning
  seed is checked (`seed_block_problems`), naming both keys.

`seed_block` picks one; `resolve_seed_block` writes the picked block's lists into the keys every
rule already reads, once, when the config is loaded (the Snakefile), so that no rule knows of blocks.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

from .config import ConfigError, parse_yaml
from .errors import InputError
from .regular_files import read_json

MAX_LOCK_BYTES = 8 << 20  # a lock is tens of KB: anything bigger is not one

EXPLORATORY, CONFIRMATORY = "exploratory", "confirmatory"
BLOCKS = (EXPLORATORY, CONFIRMATORY)
BLOCK_KEY, CONFIRMATORY_KEY = "seed_block", "confirmatory_block"
# The tuning lists: the sweep tunes CBO on seeds of its own (bellman/config_checks.sweep_seed_problems).
TUNING_LISTS = ("cbo_sweep.seeds",)
TUNING_OFFSET = 5_000
MAX_COUNT = TUNING_OFFSET  # a count above it would run a list of the study into the sweep's seeds
LOCKED_START = "protocol"  # confirmatory_block.start: the committed lock's seeds
# A derived start lies above every seed written by hand (exploratory, tuning, protocol 1's 10000 + i) and
# keeps start + 2 * TUNING_OFFSET a signed 32-bit integer, which every random generator takes.
DERIVED_FLOOR, DERIVED_CEILING = 1_000_000, 2**31 - 2 * TUNING_OFFSET


def _lists_under(value, path: tuple[str, ...]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    if not isinstance(value, dict):
        return found
    for key, item in value.items():
        where = (*path, str(key))
        if key == CONFIRMATORY_KEY and not path:
            continue  # the block's own counts, not a list of seeds
        if key == "seeds" and isinstance(item, list):
            found[".".join(where)] = list(item)
        elif key == "seeds" and isinstance(item, dict):  # one list per task
            found.update({".".join((*where, str(task))): list(seeds) for task, seeds in item.items()
                          if isinstance(seeds, list)})
        else:
            found.update(_lists_under(item, where))
    return found


def seed_lists(config: dict) -> dict[str, list[int]]:
    """Every replicate seed list of the config by its key ('seeds.control', 'cbo.settings.cbo.seeds',
    'cbo_sweep.seeds', 'mpo.seeds', ...): every key named `seeds` holding a list, or a list per task."""
    return _lists_under(config, ())


def confirmatory_seeds(key: str, count: int, start: int) -> list[int]:
    """The confirmatory block's seeds of one list (the module's rule)."""
    first = start + (TUNING_OFFSET if key in TUNING_LISTS else 0)
    return list(range(first, first + count))


def derived_start(hexdigest: str) -> int:
    """The start a sha256 (hex) gives: uniform over [DERIVED_FLOOR, DERIVED_CEILING)."""
    return DERIVED_FLOOR + int(hexdigest, 16) % (DERIVED_CEILING - DERIVED_FLOOR)


def plan_from(counts: dict[str, int], start: int) -> dict[str, list[int]]:
    return {key: confirmatory_seeds(key, count, start) for key, count in counts.items()}


def locked_start(config: dict) -> bool:
    return (config.get(CONFIRMATORY_KEY) or {}).get("start") == LOCKED_START


def confirmatory_plan(config: dict, locked: dict[str, list[int]] | None = None) -> dict[str, list[int]]:
    """Every list of `confirmatory_block.counts` with its confirmatory seeds: by the rule from an integer
    start, or the lock's lists (`locked`) where the start is `protocol` ({} without them)."""
    block = config.get(CONFIRMATORY_KEY) or {}
    if locked_start(config):
        return dict(locked or {})
    return plan_from(block.get("counts") or {}, block.get("start", 0))


def locked_plan(path: Path) -> dict[str, list[int]]:
    """The confirmatory seed plan of a protocol lock (JSON), checked: list key -> non-negative integers."""
    where = f"{path} (confirmatory_block.start: {LOCKED_START})"
    if not os.path.lexists(path):
        raise ConfigError(f"{where}: no protocol lock, so no confirmatory seeds; write it with make protocol "
                          f"(or run --config {BLOCK_KEY}={EXPLORATORY})")
    try:  # a regular file of bounded size: a FIFO or a device in its place is refused, never waited on
        lock = read_json(path, MAX_LOCK_BYTES, "a protocol lock")
    except InputError as err:
        raise ConfigError(f"{where}: not a protocol lock ({err})") from err
    plan = lock.get("seed_plan") if isinstance(lock, dict) else None
    if not (isinstance(plan, dict) and all(isinstance(key, str) and isinstance(seeds, list) and all(
            type(seed) is int and 0 <= seed < 2**31 for seed in seeds) for key, seeds in plan.items())):
        raise ConfigError(f"{where}: its 'seed_plan' is not a mapping of list keys to seeds (integers)")
    return plan


def read_spent(path: Path) -> list[dict]:
    """The confirmatory blocks already run (spent_blocks.yaml): each a protocol, its commit and the
    inclusive seed ranges it ran."""
    try:
        text = path.read_text()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the spent seed blocks ({err.strerror or err})") from err
    spent = (parse_yaml(text, str(path), "spent seed blocks") or {}).get("spent")
    if not isinstance(spent, list) or not all(
            isinstance(block, dict) and isinstance(block.get("ranges"), list) and all(
                isinstance(r, list) and len(r) == 2 and all(type(v) is int for v in r) and r[0] <= r[1]
                for r in block["ranges"]) for block in spent):
        raise ConfigError(f"{path}: 'spent' must list blocks, each with 'ranges': [[first, last], ...] of seeds")
    return spent


def spent_problems(plan: dict[str, list[int]], spent: list[dict]) -> list[str]:
    """Each list of a confirmatory plan with a seed a spent block already ran (any list's: a run of seed
    s shares its streams with every other run of seed s)."""
    problems = []
    for key, seeds in plan.items():
        for block in spent:
            used = sorted(seed for seed in seeds for first, last in block["ranges"] if first <= seed <= last)
            if used:
                problems.append(f"confirmatory list '{key}': seeds {used[:3]} were run by protocol "
                                f"{block.get('protocol')} (commit {str(block.get('commit'))[:12]}, spent_blocks.yaml); "
                                "a confirmatory block is run once")
    return problems


def count_problems(config: dict) -> list[str]:
    """The confirmatory counts name exactly the config's replicate lists."""
    lists, counts = seed_lists(config), (config.get(CONFIRMATORY_KEY) or {}).get("counts") or {}
    where = f"config key '{CONFIRMATORY_KEY}.counts'"
    problems = [f"{where}: no count for the replicate list '{key}' (every list of the confirmatory block needs one; "
                f"a development run with lists of its own: --config {BLOCK_KEY}={EXPLORATORY})"
                for key in lists if key not in counts]
    problems += [f"{where}: '{key}' is not a replicate list of the config; lists: {sorted(lists)} (to run lists of "
                 f"your own: --config {BLOCK_KEY}={EXPLORATORY})"
                 for key in counts if key not in lists]
    return problems


def seed_block_problems(config: dict, schema: dict | None = None,
                        locked: dict[str, list[int]] | None = None) -> list[str]:
    """No confirmatory seed is an exploratory or a tuning seed (each such pair named by both keys);
    with the confirmatory block picked, its counts name exactly the config's lists. Run on the config
    as merged, before resolve_seed_block (it needs the exploratory lists); a locked start's seeds are
    checked once the lock is read (`locked`: resolve_seed_block)."""
    if CONFIRMATORY_KEY not in config:
        return []
    explored = seed_lists(config)
    problems = []
    remedy = "write a new protocol" if locked_start(config) else f"raise '{CONFIRMATORY_KEY}.start'"
    for key, seeds in confirmatory_plan(config, locked).items():
        for other, used in explored.items():
            shared = sorted(set(seeds) & set(used))
            if shared:
                kind = "tuning" if other in TUNING_LISTS else "exploratory"
                problems.append(f"config key '{CONFIRMATORY_KEY}.counts.{key}': its confirmatory seeds {shared[:5]} "
                                f"are also {kind} seeds (config key '{other}'); confirmatory seeds are seeds never run "
                                f"before: {remedy}")
    if config.get(BLOCK_KEY) == CONFIRMATORY:
        problems += count_problems(config)
    return problems


def replaced_lists(config: dict, written: dict) -> list[str]:
    """With the confirmatory block picked, each replicate list the run sets to other seeds than the checkout's own
    config files do (`written`): resolve_seed_block would put the block's seeds in its place unseen. One line
    each, saying how to run those seeds."""
    if config.get(BLOCK_KEY, EXPLORATORY) != CONFIRMATORY:
        return []
    own = seed_lists(written)
    return [f"config key '{key}': seeds {seeds} given, but this run uses the confirmatory seed block, which puts "
            f"its own fresh seeds ('{CONFIRMATORY_KEY}') in every list; to run these seeds add --config "
            f"{BLOCK_KEY}={EXPLORATORY} (or '{BLOCK_KEY}: {EXPLORATORY}' in the config file); to run more or fewer "
            f"confirmatory seeds: '{CONFIRMATORY_KEY}.counts'"
            for key, seeds in seed_lists(config).items() if own.get(key) != seeds]


def place_list(config: dict, key: str, seeds: list[int]) -> None:
    *folders, last = key.split(".")
    section = config
    for folder in folders:
        if not isinstance(section.get(folder), dict):  # 'seeds.control' where `seeds` is one list for both tasks
            section[folder] = {}
        section = section[folder]
    section[last] = seeds


def lock_problems(config: dict, locked: dict[str, list[int]]) -> list[str]:
    """The lock's lists are the config's counts (a count changed after the lock is a new protocol)."""
    counts = (config.get(CONFIRMATORY_KEY) or {}).get("counts") or {}
    found = {key: len(seeds) for key, seeds in locked.items()}
    return [f"config key '{CONFIRMATORY_KEY}.counts.{key}': {counts.get(key)}, but the protocol lock's list holds "
            f"{found.get(key)} seeds; write a new protocol (make protocol) or restore the count"
            for key in sorted(set(counts) | set(found)) if counts.get(key) != found.get(key)]


def resolve_seed_block(config: dict, lock: Path | None = None) -> dict:
    """The config with every replicate list of the picked block: itself for the exploratory block; for
    the confirmatory block a copy whose lists are the confirmatory ones (checked first: count_problems),
    a locked start's read from the protocol lock at `lock`."""
    if config.get(BLOCK_KEY, EXPLORATORY) == EXPLORATORY:
        return config
    locked = None
    if locked_start(config):
        if lock is None:
            raise ConfigError(f"config key '{CONFIRMATORY_KEY}.start': {LOCKED_START}, but no protocol lock was given")
        locked = locked_plan(lock)
    problems = count_problems(config) + (lock_problems(config, locked) + seed_block_problems(config, None, locked)
                                         if locked is not None else [])
    if problems:
        raise ConfigError(problems[0])
    resolved = copy.deepcopy(config)
    for key, seeds in confirmatory_plan(config, locked).items():
        place_list(resolved, key, seeds)
    return resolved


def canonical_json(value) -> str:
    """One text per value: sorted keys, no spaces (what the protocol's digests are taken of)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def digest(value) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()
