"""Rebuild part of a published run in a scratch copy of the project and compare it with its manifest.

`make verify TARGETS="results/..."` rebuilds the named artefacts (each must be one the manifest lists),
`make verify SAMPLE=5` a seeded sample of five (artefacts of distinct folders whose build needs at most
--max-jobs jobs), each with its upstream, in a scratch copy of the project beside it (report/rebuild.py):
the code of the commit the manifest's artefacts were built at where the checkout's repository holds it
(--code: auto, published or checkout), at the manifest's scale, with the scale's profile and the user's own
Snakemake options (--snakemake-args; the manifest's are shown, never used); `make verify RUN=.` compares the
checkout's own finished run, rebuilding nothing. Every artefact is judged against the manifest
(report/verify.py: identical, within tolerance, chaotic, measured, missing, different), then each claim's
verdict (report/verify_claims.py). A manifest is checked field by field before any of it is used
(report/manifest_schema.py). Everything verify writes is inside its scratch folders, removed at the end
unless --keep (and the report it is asked for with --report).

Exits with status 1 when an artefact is different or missing, a target is not in the manifest, nothing
was compared, or a verdict moved; 2 when the manifest or the build fails.

    python -m rlstudy.report.cli.verify --manifest docs/manifest.json --sample 5
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from collections import Counter
from pathlib import Path

from rlstudy.claims.publication import COMMIT
from rlstudy.core.cli import integer_from, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import write_artefact
from rlstudy.core.provenance import read_record
from rlstudy.report import rebuild
from rlstudy.report.manifest import kind_of, run_commit
from rlstudy.report.manifest_schema import ARTEFACT_PATH, load_manifest
from rlstudy.report.platform import (cannot_emulate, differing_kernels, differing_platform, emulation_environment,
                                    platform_record)
from rlstudy.report.rebuild import say
from rlstudy.report.verify import UNVERIFIABLE, judge, needs_published_kernels, run_files, summary_line
from rlstudy.report.verify_claims import compare_claims


def platform_line(record: dict) -> tuple[bool, dict]:
    """Print which platform this is against the manifest's, by what the libraries report they run;
    (whether the same, this machine's rounding record)."""
    here = platform_record()["rounding"]
    published = record["platform"]["rounding"]
    differ = differing_platform(published, here)
    same = "the manifest's" if not differ else f"another (differs in {', '.join(differ)})"
    say(f"platform: {same}; this machine: {here['cpu_model']}, OpenBLAS {here['openblas_kernels']}, torch "
        f"{here['torch_cpu_capability']}; the manifest's: {published['cpu_model']}, OpenBLAS "
        f"{published['openblas_kernels']}, torch {published['torch_cpu_capability']}")
    return not differ, here


def rebuild_commit(record: dict, project: Path, code: str) -> str | None:
    """The commit whose code rebuilds (None: the checkout's files), said in a line. auto: the manifest's
    run commit where the checkout's repository holds it, else the checkout's; published: that commit or
    an error."""
    commit = run_commit(Counter(record["commits_of_artefacts"]))
    if code == "checkout":
        say("code: the checkout's files (--code checkout)")
        return None
    if rebuild.has_commit(project, commit):
        say(f"code: commit {commit[:12]}, the one the manifest's artefacts were built at (from the repository of "
            f"{project}; --code checkout rebuilds the checkout's files instead)")
        return commit
    why = (f"the manifest's run commit {commit[:60]!r} is not a clean commit" if not re.fullmatch(COMMIT, commit)
           else f"the manifest's run commit {commit[:12]} is not in the repository of {project} (a shallow clone? "
                "git fetch --unshallow)")
    if code == "published":
        raise InputError(f"--code published: {why}")
    say(f"code: the checkout's files: {why}")
    return None


def checked_targets(record: dict, targets: list[str]) -> list[str]:
    """The targets, each an artefact the manifest lists; one line for each that is not, at once."""
    refused = []
    for target in targets:
        if not re.fullmatch(ARTEFACT_PATH, target) or target not in record["artefacts"]:
            say(f"target {target[:200]!r}: refused, not an artefact of the manifest")
            refused.append(target)
    if refused:
        say(f"verify: {len(refused)} of {len(targets)} targets not in the manifest: nothing rebuilt")
        sys.exit(1)
    return targets


def under_published_kernels(record: dict, here: dict, paths: list[str], project: Path, arguments: list[str],
                            scratch: Path, commit: str | None) -> tuple[Path | None, str | None]:
    """(the scratch copy where paths were rebuilt under the manifest's kernels (OPENBLAS_CORETYPE,
    ATEN_CPU_CAPABILITY), None where not; why this CPU cannot run those kernels, where a probe's products
    died under them: nothing is rebuilt then). None too where the rebuild's kernels are not the manifest's."""
    published = record["platform"]["rounding"]
    environment = emulation_environment(published)
    if not differing_kernels(published, here):
        say("the manifest's kernels are this machine's own: nothing to emulate")
        return None, None
    why = cannot_emulate(environment)
    if why:
        why = f"this CPU cannot run the manifest's kernels {environment}: {why}"
        say(why)
        return None, why
    say(f"rebuilding {len(paths)} artefact(s) of a kind measured to move under the manifest's kernels: {environment}")
    rebuild.copy_project(project, scratch, commit)
    rebuild.build(paths, arguments, scratch, environment)
    ran = {str((read_record(scratch / path, "an artefact rebuilt under the manifest's kernels") or {})
               .get("openblas_kernels")) for path in paths}
    if ran != {published["openblas_kernels"]}:
        say(f"this machine ran OpenBLAS {', '.join(sorted(ran))}, not the manifest's {published['openblas_kernels']}: "
            "its kernels cannot be emulated here")
        return None, None
    return scratch, None


def compare_run(record: dict, run_folder: Path, asked: list[str] | None, same_platform: bool, here: dict,
                work: Path, project: Path, arguments: list[str], commit: str | None,
                keep: bool = False) -> tuple[bool, list[str]]:
    """Every asked artefact (every one of the manifest when asked is None) and every artefact the run
    folder holds, judged; the verdicts; (whether everything agrees as the platform allows, report lines)."""
    claim_lines, moved = compare_claims(record, run_folder, work, arguments)  # first: it may build the exact Q
    found = run_files(run_folder)
    paths = sorted(set(found) | set(record["artefacts"] if asked is None else asked))
    moving = [path for path in paths if needs_published_kernels(path, run_folder / path, record, same_platform)]
    emulation = rebuild.make_scratch(None, project) if moving else None  # beside the project, like the first
    try:
        emulated, unrunnable = (under_published_kernels(record, here, moving, project, arguments, emulation, commit)
                                if emulation else (None, None))
        results = [(path, *judge(path, run_folder / path, record, same_platform,
                                 emulated / path if emulated else None, unrunnable)) for path in paths]
    finally:
        if emulation is not None and not keep:
            shutil.rmtree(emulation, ignore_errors=True)
    lines = ["", "| artefact | kind | result |", "| --- | --- | --- |"]
    counts: dict[str, int] = {}
    failed = False
    for path, result, fails in results:
        failed |= fails
        lines.append(f"| `{path}` | {kind_of(path)} | {result} |")
        counts[result.split(" (")[0]] = counts.get(result.split(" (")[0], 0) + 1
    uncompared = ("missing", "not in the manifest", UNVERIFIABLE)
    compared = sum(n for result, n in counts.items() if result not in uncompared)
    lines += ["", summary_line(counts)]
    if not compared:
        lines.append("nothing compared: this CPU cannot verify what was asked (above)" if UNVERIFIABLE in counts
                     else f"nothing compared: no artefact of the manifest is in {run_folder}")
        failed = True
    lines += claim_lines
    return not (failed or moved), lines


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--manifest", default="docs/manifest.json", help="the published run's manifest")
    p.add_argument("--project", default=".", help="the checkout whose code rebuilds (copied; its outputs are not)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--targets", nargs="+", help="artefacts of the manifest to rebuild, with their upstream")
    which.add_argument("--sample", type=integer_from(1), help="rebuild this many sampled jobs, with their upstream")
    which.add_argument("--run", help="compare a finished run's folder as it is, rebuilding nothing (e.g. . after "
                                     "make report: the whole run and its verdicts against the published ones)")
    p.add_argument("--seed", type=integer_from(0), default=0, help="the sample's seed")
    p.add_argument("--max-jobs", type=integer_from(1), default=10,
                   help="a sampled artefact's build runs at most this many jobs (its upstream included)")
    p.add_argument("--snakemake-args", default="",
                   help="Snakemake options for the rebuild (e.g. --config authors_data=...): yours alone; the "
                        "manifest's are shown for comparison, never used")
    p.add_argument("--code", choices=("auto", "published", "checkout"), default="auto",
                   help="the code that rebuilds: the commit the manifest's artefacts were built at (published), the "
                        "checkout's files (checkout), or the first where the checkout's repository holds it (auto)")
    p.add_argument("--cores", default="all", help="Snakemake's --cores")
    p.add_argument("--scratch", help="an empty folder to rebuild in (default: a new one beside the project, "
                                     "so that relative paths of the options, e.g. ../shared, still resolve)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folders")
    p.add_argument("--report", help="also write the table of results to this file (Markdown)")
    args = p.parse_args()
    record = load_manifest(args.manifest)
    same_platform, here = platform_line(record)
    arguments = rebuild.options(record["scale"], args.cores, shlex.split(args.snakemake_args))
    say(f"the manifest's run used the Snakemake options {shlex.join(record['snakemake_args']) or '(none)'} "
        f"(shown only); this rebuild uses {shlex.join(arguments)}")
    project = Path(args.project).resolve()
    commit = rebuild_commit(record, project, args.code)
    targets = checked_targets(record, args.targets) if args.targets else None
    scratch = rebuild.make_scratch(args.scratch, project)
    try:
        work = scratch / ".verify"
        if args.run:
            work.mkdir()
            agreed, lines = compare_run(record, Path(args.run), None, same_platform, here, work, project,
                                        arguments, commit, args.keep)
        else:
            rebuild.copy_project(project, scratch, commit)
            if targets is None:
                targets = rebuild.sample_targets(record, args.sample, args.seed, args.max_jobs, arguments, scratch)
                say(f"sample (seed {args.seed}): {' '.join(targets)}")
            rebuild.build(targets, arguments, scratch)
            work.mkdir()
            agreed, lines = compare_run(record, scratch, targets, same_platform, here, work, project, arguments,
                                        commit, args.keep)
    finally:
        if args.keep:
            say(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    lines.append("verify: " + ("agrees with the manifest" if agreed
                               else "DIFFERS from the manifest beyond what the platform explains, "
                                    "or could not compare what it was asked"))
    say("\n".join(lines))
    if args.report:
        write_artefact(args.report, ("\n".join(lines) + "\n").encode(), None)
    if not agreed:
        sys.exit(1)


if __name__ == "__main__":
    run(main)
