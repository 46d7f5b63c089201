"""The confirmatory block's group-sequential design, run look by look (docs/claims.md, 'How the looks run').

Where the confirmatory block runs under a lock that fixes a design (protocol.lock `design`, written by make
protocol: report/design.py), every seed list the design plans is run in looks: look k runs the first n_k
seeds of the list, n_k the design's k-th count for it. After a look the look step
(claims/cli/decide_look.py) decides every claim the design tests and writes results/looks/look{k}/: its
tests (claims.csv) and, per list, its count and whether it continues (lists.csv). A list continues while a
claim that reads it is open, and stops at its boundary or at its maximum.

One look per Snakemake run: when the Snakefile is parsed, `run_looks` reads the looks already made (each
lists.csv checked as data against the design: its lists, its counts, a stopped list staying stopped) and
writes into the config the seeds of the look in progress (a continuing list: its next count; a stopped
list: its count when it stopped; a list the design does not plan: all its seeds), so that every rule runs
those seeds and no others. `python -m rlstudy.runtime.launch` (every make target) runs the workflow again
while the last look says a list continues; once the design has finished, a run plans nothing new.

Elsewhere (the exploratory block, which the smoke profile runs; a confirmatory block whose seeds do not
come from a lock; a lock without a design) there is one look, every seed as listed, and no look is read or
written: the workflow runs as it does without a design.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

from .config import ConfigError
from .errors import InputError
from .regular_files import read_json, read_regular
from .seed_blocks import BLOCK_KEY, CONFIRMATORY, MAX_LOCK_BYTES, locked_start, place_list, seed_lists

LOOKS_DIR = Path("results/looks")
LISTS_FILE, CLAIMS_FILE = "lists.csv", "claims.csv"
LIST_COLUMNS = ("list", "look", "count", "status", "next_count")
CONTINUE, STOP = "continue", "stop"
MAX_LOOK_FILE_BYTES = 1 << 20  # a look's file is a row per list or per test: a few KB


def look_dir(look: int, root: Path = LOOKS_DIR) -> Path:
    return root / f"look{look}"


def locked_design(lock: Path) -> dict:
    """The design a protocol lock fixes ({} where it fixes none), its lists checked: every list has the
    design's number of looks, its counts increasing positive integers."""
    where = f"{lock} (the protocol lock's 'design')"
    try:
        design = read_json(lock, MAX_LOCK_BYTES, "a protocol lock").get("design") or {}
    except (InputError, AttributeError) as err:
        raise ConfigError(f"{where}: not a protocol lock ({err})") from err
    lists = design.get("lists") if isinstance(design, dict) else None
    if not lists:
        return {}
    looks = design.get("looks")
    found = {key: item.get("looks") for key, item in lists.items() if isinstance(item, dict)} \
        if isinstance(lists, dict) else {}
    if type(looks) is not int or looks < 1 or len(found) != len(lists) or not all(
            isinstance(counts, list) and len(counts) == looks and all(type(n) is int and n > 0 for n in counts)
            and all(a < b for a, b in zip(counts, counts[1:])) for counts in found.values()):
        raise ConfigError(f"{where}: 'lists' must give every seed list 'looks': {looks!r} increasing positive "
                          "counts; write the lock again with make protocol")
    from .sequential import SPENDING  # here: the launcher reads the looks without SciPy

    if not isinstance(design.get("tests"), list) or design.get("spending") not in SPENDING:
        raise ConfigError(f"{where}: expected its 'tests' (a list) and 'spending' (one of {list(SPENDING)})")
    for test in design["tests"]:
        if not _planned_test(test, lists):
            raise ConfigError(f"{where}: a test {str(test)[:80]!r} is not a planned test (claim, test number, kind, "
                              "its lists of the design, level, power, effect, maximum)")
    return design


def tables_read(design: dict, claims: dict) -> list[str]:
    """The result tables (claims.yaml `table`) the design's tests read."""
    by_id = {claim["id"]: claim for claim in claims["claims"]}
    return sorted({by_id[plan["claim"]]["tests"][int(plan["test"]) - 1]["table"] for plan in design.get("tests") or []
                   if plan.get("lists") and plan.get("claim") in by_id and 0 < int(plan["test"]) <= len(by_id[plan["claim"]]["tests"])})


def _planned_test(test, lists: dict) -> bool:
    number = lambda value: type(value) in (int, float) and 0 < value < 1  # noqa: E731 (a level, a power, an effect)
    return (isinstance(test, dict) and isinstance(test.get("claim"), str) and type(test.get("test")) is int
            and test["test"] > 0 and test.get("kind") in ("paired", "unpaired", "share")
            and isinstance(test.get("lists"), list) and all(key in lists for key in test["lists"])
            and all(number(test.get(key)) for key in ("level", "power", "effect"))
            and (test.get("maximum") is None or type(test.get("maximum")) is int and test["maximum"] > 0))


def design_lists(design: dict) -> dict[str, list[int]]:
    """The design's look counts per seed list (locked_design checked them)."""
    return {key: item["looks"] for key, item in (design.get("lists") or {}).items()}


@dataclass(frozen=True)
class LookState:
    """Where the design stands: the looks made, the seeds per list of this run, the look it makes (None:
    the design has finished: every list stopped)."""
    lists: dict[str, list[int]]   # the design's look counts per list
    made: int
    counts: dict[str, int]
    current: int | None

    @property
    def last(self) -> int | None:
        """The look whose decisions the claims read: the one this run makes, or the last made."""
        return self.current or self.made or None


def _lists_rows(path: Path) -> list[dict[str, str]]:
    text = read_regular(path, MAX_LOOK_FILE_BYTES, "a look's lists").decode("utf-8", errors="replace")
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != LIST_COLUMNS:
        raise ConfigError(f"{path}: columns {reader.fieldnames}, expected {list(LIST_COLUMNS)}")
    return list(reader)


def _integer(text: str, path: Path, what: str) -> int:
    if not (isinstance(text, str) and text.isdigit() and len(text) < 10):
        raise ConfigError(f"{path}: {what} {text!r} is not a count (a non-negative integer)")
    return int(text)


def read_look(path: Path, look: int, lists: dict[str, list[int]], counts: dict[str, int],
              stopped: set[str]) -> dict[str, int | None]:
    """A look's lists.csv, checked against the design and the looks before it: each list of the design
    once, at the count the looks before gave it; a stopped list stays stopped; a continuing list's next
    count is the design's next. Per list, its next count (None: it stopped)."""
    found: dict[str, int | None] = {}
    for row in _lists_rows(path):
        key = row["list"]
        if key not in lists:
            raise ConfigError(f"{path}: list {key!r} is not a seed list of the design (lists: {sorted(lists)})")
        if key in found:
            raise ConfigError(f"{path}: list {key!r} appears twice")
        if _integer(row["look"], path, "look") != look:
            raise ConfigError(f"{path}: look {row['look']!r} in the file of look {look}")
        count, following = _integer(row["count"], path, "count"), _integer(row["next_count"], path, "next_count")
        if count != counts[key]:
            raise ConfigError(f"{path}: list {key!r} at count {count}, but the looks before give it {counts[key]}")
        position = lists[key].index(count)
        if row["status"] == STOP and following == count:
            found[key] = None
        elif (row["status"] == CONTINUE and key not in stopped and position + 1 < len(lists[key])
              and following == lists[key][position + 1]):
            found[key] = following
        else:
            raise ConfigError(f"{path}: list {key!r}: status {row['status']!r} with next count {row['next_count']!r} "
                              f"is not a step of the design (continue to its next count {lists[key][position + 1:][:1]}, "
                              f"or stop at {count}; a stopped list stays stopped)")
    missing = sorted(set(lists) - set(found))
    if missing:
        raise ConfigError(f"{path}: no row for the design's lists {missing}")
    return found


def look_state(lists: dict[str, list[int]], root: Path = LOOKS_DIR) -> LookState:
    """The state the looks made under `root` give (each read with read_look)."""
    counts, stopped, made = {key: looks[0] for key, looks in lists.items()}, set(), 0
    while os.path.lexists(look_dir(made + 1, root) / LISTS_FILE):
        path = look_dir(made + 1, root) / LISTS_FILE
        try:
            following = read_look(path, made + 1, lists, counts, stopped)
        except InputError as err:
            raise ConfigError(str(err)) from err
        made += 1
        stopped |= {key for key, n in following.items() if n is None}
        counts = {key: n if n is not None else counts[key] for key, n in following.items()}
        if len(stopped) == len(lists):
            return LookState(lists, made, counts, None)
    return LookState(lists, made, counts, made + 1)


def design_active(config: dict, lock: Path) -> dict:
    """The lock's design where this run runs it (the confirmatory block, its seeds from a lock with a
    design); {} elsewhere."""
    if config.get(BLOCK_KEY) != CONFIRMATORY or not locked_start(config):
        return {}
    return locked_design(lock)


def run_looks(config: dict, lock: Path, root: Path = LOOKS_DIR) -> LookState | None:
    """Write the seeds of the look in progress into the config's lists (the module's docstring); None and
    the config untouched where the design does not run."""
    lists = design_lists(design_active(config, lock))
    if not lists:
        return None
    have = seed_lists(config)
    unknown = sorted(key for key in lists if key not in have)
    if unknown:
        raise ConfigError(f"{lock}: the design plans seed lists {unknown} that the config does not have")
    state = look_state(lists, root)
    for key, count in state.counts.items():
        if count > len(have[key]):
            raise ConfigError(f"{lock}: the design looks at {count} seeds of '{key}', whose list holds {len(have[key])}")
        place_list(config, key, have[key][:count])
    return state


def continues(root: Path = LOOKS_DIR) -> tuple[int, bool]:
    """The looks made under `root` (consecutive from look 1) and whether the last says a list continues:
    what the looks' driver reads between runs (the Snakefile checks each file in full)."""
    made = 0
    while os.path.lexists(look_dir(made + 1, root) / LISTS_FILE):
        made += 1
    if not made:
        return 0, False
    try:
        rows = _lists_rows(look_dir(made, root) / LISTS_FILE)
    except InputError as err:
        raise ConfigError(str(err)) from err
    return made, any(row["status"] == CONTINUE for row in rows)
