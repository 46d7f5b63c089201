"""The files asked for on Snakemake's command line, checked when the Snakefile is read, before Snakemake
plans them: a name no rule makes (a misspelt figure) gets the nearest targets the workflow knows,
instead of Snakemake's bare MissingRuleException; a run of a seed the config does not list (seed7 where
the setting's seeds are 0 and 1) is refused, instead of built silently beside the configured ones.

The Snakefile reads the targets from Snakemake's own command line (sys.argv): when it reads the
Snakefile, Snakemake has not yet handed its DAG settings (the targets) to the workflow.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

SEED = re.compile(r"(?:^|/)seed(\d+)(?=/|$)")


class TargetError(Exception):
    """A target asked for on the command line that the workflow would not, or should not, build."""


def requested_targets(argv: list[str] | None = None) -> list[str]:
    """The targets of Snakemake's command line; none where this process is not Snakemake's CLI (the API,
    or a cluster job, which runs --target-jobs)."""
    argv = sys.argv if argv is None else argv
    program = Path(argv[0]) if argv else Path()
    if not (program.name == "snakemake" or program.parts[-2:] == ("snakemake", "__main__.py")):
        return []
    from snakemake.cli import get_argument_parser

    try:
        args = get_argument_parser().parse_args(argv[1:])
    except (SystemExit, Exception):  # Snakemake's own parse decides; nothing to check where this one fails
        return []
    return [] if getattr(args, "target_jobs", None) else list(args.targets or [])


def nearest(target: str, known: Iterable[str], count: int = 3) -> list[str]:
    """The known targets nearest the target's spelling: by whole path, or by file name where the target
    names a file alone (q_contol_cbo.png)."""
    known = sorted(set(known))
    suffix = os.path.splitext(target)[1]
    if suffix and any(path.endswith(suffix) for path in known):  # a misspelt figure.png: the .png figures
        known = [path for path in known if path.endswith(suffix)]
    if "/" not in target:
        by_name: dict[str, list[str]] = {}
        for path in known:
            by_name.setdefault(os.path.basename(path), []).append(path)
        names = difflib.get_close_matches(target, by_name, n=count, cutoff=0.6)
        return [path for name in names for path in by_name[name]][:count]
    return difflib.get_close_matches(target, known, n=count, cutoff=0.6)


def unlisted_seed(target: str, known: set[str]) -> str | None:
    """Why a run's file of a seed the config does not list is refused: the workflow knows the same file of
    other seeds (its default target lists every run's own files) but not of this one; else None."""
    match = SEED.search(target)
    if match is None or target in known:
        return None
    start, end = match.span(1)
    family = re.compile(re.escape(target[:start]) + r"(\d+)" + re.escape(target[end:]))
    seeds = sorted({int(m.group(1)) for path in known for m in [family.fullmatch(path)] if m})
    if not seeds:
        return None
    listed = ", ".join(map(str, seeds))
    return (f"{target}: seed {match.group(1)} is not a seed the config lists for these runs ({listed}); "
            "add it to the config's seeds of these runs to build it (make -s first-seed prints the first seed "
            "of the run's block)")


def target_problems(targets: Iterable[str], known: Iterable[str], rule_names: Iterable[str],
                    produced: Callable[[str], bool], exists: Callable[[str], bool] = os.path.exists) -> list[str]:
    """One line for each target no rule makes (with the nearest known ones) or of an unlisted seed."""
    known, rule_names = set(known), set(rule_names)
    problems = []
    for target in targets:
        if target in rule_names:
            continue
        path = os.path.normpath(target)
        if produced(path):
            seed = unlisted_seed(path, known)
            if seed:
                problems.append(seed)
        elif not exists(path):
            near = nearest(path, known | rule_names)
            hint = f"; the nearest known: {', '.join(near)}" if near else ""
            problems.append(f"no rule makes {target} (a misspelt target?){hint}")
    return problems
