"""How a rebuilt artefact compares with its manifest (report/cli/verify.py runs the rebuild).

Each artefact is, against the manifest's sha256:

- identical;
- within tolerance: another platform, a kind measured to move under another kernel (the stationary
  density: report/platform_spread.json, written by benchmarks/platform_spread.py), whose rebuild under
  the manifest's own kernels, emulated here, is the manifest's bytes, and whose difference from it is
  at most ROUNDING_RTOL (the size is printed); or the reference error within RTOL_THREE_DIGITS;
- chaotic: another platform, a trained network's numbers (or a table or figure drawn from them), which
  another CPU's kernels move beyond any per-number tolerance: compared through the verdicts only;
- measured: a wall time, never compared;
- missing: asked for (a target, a sampled artefact, an artefact of the manifest under --run) and not
  there to compare: a failure;
- not verifiable here: a kind measured to move, on a CPU that cannot run the manifest's kernels (OpenBLAS's
  AVX-512 ones on an AVX2 CPU), so that nothing here tells its rounding from a defect: not a failure, and
  not counted as compared;
- different: anything else. On the manifest's platform (report/platform.py: what the libraries report
  they run, never the environment) every artefact but the measured must be identical.
"""

from __future__ import annotations

import csv
import math
from functools import cache
from pathlib import Path

import numpy as np

from rlstudy.core.errors import InputError
from rlstudy.core.provenance import PROVENANCE_SUFFIX, sha256_file
from rlstudy.core.regular_files import read_json
from rlstudy.report.manifest import FOLDERS, kind_of, read_table

# Across real platforms, from the one measurement there is: the same seeds at paper scale on an AMD EPYC
# (OpenBLAS's Haswell kernels, pinned) and an Intel Xeon (AVX-512/AMX, no pin), ../shared/FACTS.md,
# "Measured 2026-11-27": the learned Q*'s exact error agreed to three digits, the tabular agents' returns
# exactly, and every trained network's numbers moved: "across platforms only the spread over seeds and
# the verdicts can be compared". The kinds that train nothing are measured under every kernel this
# machine emulates (SPREAD_FILE) and take their rule from there.
RTOL_THREE_DIGITS = 5e-3
# A kind measured to move under another kernel: the largest relative difference of any number that is
# still the kernels' rounding (the density's measured spread is about 1e-11, its solver's rtol 1e-8).
ROUNDING_RTOL = 1e-8
CROSS_PLATFORM = {
    "tabular-agent": "exact",  # the Q-table's returns agreed exactly
    "reference-error": "rtol",  # the learned Q*'s exact error agreed to three digits
    "reference": "chaotic",  # the learned Q*'s network itself: trained
    "run": "chaotic",
    "agent": "chaotic",
    "offline": "chaotic",
    "table": "chaotic",  # summaries of trained runs
    "figure": "chaotic",  # drawn from them (and from a renderer's rounding)
    # not measured across platforms: no tolerance to apply, a difference is reported as one
    "authors-import": "unmeasured",
}
SPREAD_FILE = Path(__file__).with_name("platform_spread.json")
UNVERIFIABLE = "not verifiable here"  # a verdict's first words, as the summary counts it


@cache
def measured_rules(path: Path = SPREAD_FILE) -> dict[str, str]:
    """The rule of each kind benchmarks/platform_spread.py measured: exact where every emulated kernel
    rebuilt it byte for byte, rounding where one moved it within ROUNDING_RTOL, unmeasured beyond."""
    if not path.is_file():
        return {}
    spread = read_json(path, 1 << 20, "the measured platform spread")
    rules = {}
    for kind, entry in spread.get("kinds", {}).items():
        if entry.get("identical") is True:
            rules[kind] = "exact"
        elif entry.get("largest_relative_difference", math.inf) <= ROUNDING_RTOL:
            rules[kind] = "rounding"
        else:
            rules[kind] = "unmeasured"
    return rules


def cross_platform_rule(kind: str) -> str:
    return {**CROSS_PLATFORM, **measured_rules()}.get(kind, "unmeasured")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def within(published: dict, rebuilt: Path, rtol: float) -> bool:
    """A rebuilt table against its rows in the manifest: the same columns and rows, text cells equal,
    numbers within rtol (NaN equals NaN)."""
    header, *rows = read_table(rebuilt)
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


def relative_difference(first: Path, second: Path) -> float:
    """The largest relative difference of any number of two arrays of one shape (inf otherwise)."""
    try:
        x, y = np.load(first, allow_pickle=False), np.load(second, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise InputError(f"{first} or {second}: not a NumPy array ({err})") from err
    if x.shape != y.shape or x.dtype.kind not in "fiu" or y.dtype.kind not in "fiu":
        return math.inf
    x, y = x.astype(float), y.astype(float)
    return float(np.max(np.abs(x - y) / np.maximum(np.abs(x), np.finfo(float).tiny), initial=0.0))


def judge(path: str, rebuilt: Path, record: dict, same_platform: bool,
          under_published_kernels: Path | None = None, unrunnable: str | None = None) -> tuple[str, bool]:
    """(what the rebuilt artefact is against the manifest, whether that fails the check).
    under_published_kernels: the same artefact rebuilt here under the manifest's kernels, where built;
    unrunnable: why this CPU cannot run those kernels, where it cannot."""
    entry = record["artefacts"].get(path)
    if entry is None:
        return "not in the manifest (not compared)", False
    if not rebuilt.is_file():
        return "missing (not there to compare)", True
    if entry.get("measured"):
        return "measured (not compared)", False
    if sha256_file(rebuilt) == entry["sha256"]:
        return "identical", False
    if same_platform:
        return "different (the manifest's platform: every bit should repeat)", True
    rule = cross_platform_rule(kind_of(path))
    if rule == "chaotic":
        return "chaotic (another platform: compared through the verdicts)", False
    if rule == "rtol":
        table = next((t for t in record["tables"].values() if t["path"] == path), None)
        if table is not None and within(table, rebuilt, RTOL_THREE_DIGITS):
            return f"within tolerance (another platform: rtol {RTOL_THREE_DIGITS:g})", False
        return f"different (beyond rtol {RTOL_THREE_DIGITS:g} across platforms)", True
    if rule == "rounding":
        return _judge_rounding(path, rebuilt, entry, under_published_kernels, unrunnable)
    if rule == "exact":
        return "different (another platform, but this kind was measured identical under every kernel)", True
    return "different (another platform; this kind was never measured across platforms)", True


def _judge_rounding(path: str, rebuilt: Path, entry: dict, emulated: Path | None,
                    unrunnable: str | None) -> tuple[str, bool]:
    if unrunnable:
        return f"{UNVERIFIABLE} ({unrunnable}: they alone tell this kind's rounding from a defect)", False
    if emulated is None or not emulated.is_file():
        return "different (another platform's kernels could not be emulated here to tell rounding from a defect)", True
    if sha256_file(emulated) != entry["sha256"]:
        return "different (rebuilt under the manifest's kernels here, it is still not the manifest's)", True
    size = relative_difference(emulated, rebuilt) if path.endswith(".npy") else math.inf
    if size <= ROUNDING_RTOL:
        return (f"within tolerance (another platform's kernels: under the manifest's it is the manifest's bytes; "
                f"largest relative difference {size:.2g}, bound {ROUNDING_RTOL:g})"), False
    return f"different (largest relative difference {size:.2g} beyond the kernels' {ROUNDING_RTOL:g})", True


def needs_published_kernels(path: str, rebuilt: Path, record: dict, same_platform: bool) -> bool:
    """Whether judging path needs it rebuilt under the manifest's kernels: a kind measured to move, differing."""
    entry = record["artefacts"].get(path)
    return (not same_platform and entry is not None and not entry.get("measured") and rebuilt.is_file()
            and cross_platform_rule(kind_of(path)) == "rounding" and sha256_file(rebuilt) != entry["sha256"])


def run_files(folder: Path) -> list[str]:
    """Every artefact under folder's data/, results/ and figures/ (no provenance record, no hidden file)."""
    return sorted(p.relative_to(folder).as_posix() for top in FOLDERS for p in (folder / top).rglob("*")
                  if p.is_file() and not p.name.endswith(PROVENANCE_SUFFIX) and not p.name.startswith("."))


def write_table(table: dict, path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(table["columns"])
        writer.writerows(table["rows"])


def summary_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {result}" for result, n in sorted(counts.items())) or "nothing compared"
