"""Write the generated blocks of the documentation from the result tables, so that no result in the
README or the study pages is typed by hand (`make readme` runs this after building the tables):

- README.md, between its claims markers: the counts of results/claims.csv's verdicts and the
  claims' ids by verdict; docs/claims.md: every claim with its statement, verdict and evidence, the
  looks of the group-sequential design (report/looks_page.py) and each previous protocol's verdicts
  beside this run's (report/publications_page.py, from docs/publications/);
- docs/bellman.md, between its results markers: the final errors over seeds of
  results/summary_stats.csv and the learned Q*'s distance to the exact Q of
  results/reference/error_exact.csv;
- docs/bellman.md, "Seeds and uncertainty": every rank test's estimated power at the claims file's
  power sizes, from results/seed_power.csv (what the config's seed counts are chosen by);
- docs/bellman.md, "What CBO needs": the blocks of rlstudy.bellman.results.bellman_page (sweep, cost, the
  notebook's CBO and cbo-adaptive as measured);
- docs/agents.md and docs/offline.md, between their results markers: the tables of
  rlstudy.report.study_tables, from the agents' and the offline summaries;
- docs/figures/: the run's headline figures, small, with provenance, shown between the headline-figures
  markers of the README and the study pages (rlstudy.report.headline_figures).

These are tracked files, so the tables must come from the paper-scale profile (every run they
summarise was made with the optimiser parameters config.yaml gives, which the smoke profile's
scale.yaml changes) and from a clean commit of this repository (their records' git_commit, an
ancestor of HEAD); --allow-any-results renders other results (e.g. to preview a smoke run), and the
claims page then states that it is not of the paper's scale (rlstudy.report.table_scale: what
compare_verdicts reads). The verdicts are published by the seed block of their run (results/claims.csv's
seed plan input; rlstudy.report.protocol): a confirmatory run's only against the committed protocol.lock
(refused where its seed plan, shared claims settings or analysis code differ, or it predates the
protocol commit; claims changed or added since the protocol are listed apart, no verdict); an
exploratory run's (or one made before the blocks) as exploratory outcomes, with no verdict headline.
Every block of the study pages opens with that seed block, and a table whose seeds are not of it is
refused. Every inserted value, in either mode, is escaped for Markdown and HTML
(core.markdown.text). The pages are written all or none (core.atomic_writes.replace_all): every block is
rendered and checked, and every page's folder proved writable, before any page changes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd

from rlstudy.bellman.results import bellman_page
from rlstudy.bellman.results.bellman_page import GROUP, RESULTS_END, RESULTS_START, coverage_at_spread, render_results
from rlstudy.claims.loading import load_claims
from rlstudy.core.markdown import cells_of, check_block, code, markers, markers_intact, text
from rlstudy.report import claims_page, headline_figures, looks_page, publications_page
from rlstudy.report.seed_power_page import SEED_POWER_END, SEED_POWER_START, check_powers, render_seed_power
from rlstudy.report.protocol import LOCK, Standing, block_note, foreign_seeds, judge
from rlstudy.report.table_scale import scale_line, scale_problem
from rlstudy.report.study_tables import STUDY_TABLES
from rlstudy.report.verdicts import MARK, VERDICTS, verdict_counts
from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError, OutputError
from rlstudy.core.atomic_writes import replace_all
from rlstudy.core.loaders import load_csv
from rlstudy.core.provenance import read_record


START, END = markers("claims")
CLAIMS_PAGE_START, CLAIMS_PAGE_END = markers("claims-table")


CLAIM_ID = re.compile(r"[a-z0-9-]+")


def _checked_ids(claims: pd.DataFrame) -> None:
    for claim in claims["id"]:
        if not CLAIM_ID.fullmatch(str(claim)):
            raise InputError(f"claim id {str(claim)[:80]!r}: not of the ids claims.yaml allows ([a-z0-9-]+)")


def _not_in_run(pending) -> list[str]:
    """A line naming the claims of this checkout's claims.yaml that the run predates (no verdict yet)."""
    if not pending:
        return []
    return ["", f"Not in this run, added to `claims.yaml` after its commit ({len(pending)}, no verdict until the "
                "next paper-scale run): " + ", ".join(code(claim) for claim in pending) + "."]


def _block_line(standing: Standing | None) -> list[str]:
    """The line naming the seed block and the protocol the verdicts are published under (none without a standing)."""
    if standing is None:
        return []
    if standing.confirmatory:
        return [f"Seed block: confirmatory, judged against the protocol of commit {text(standing.protocol)} "
                "(`protocol.lock`: the claims, seed plan and analysis code locked before the run)."]
    return ["Seed block: exploratory (the seeds the study was developed, tuned and its claims written on): these "
            "are exploratory outcomes, not verdicts; verdicts come from a confirmatory run under a protocol "
            "(docs/reliability.md, 'Seed blocks and the protocol')."]


def _apart(standing: Standing | None) -> list[str]:
    """Lines naming the claims published apart (changed or added after the protocol commit) and those the
    protocol locked that the run has not."""
    if standing is None or not standing.confirmatory:
        return []
    lines = []
    if standing.apart:
        lines += ["", f"Exploratory, no verdict until the next protocol ({len(standing.apart)}): "
                  + ", ".join(f"{code(claim)} ({why})" for claim, why in standing.apart.items()) + "."]
    if standing.locked_not_run:
        lines += ["", f"Locked by the protocol, not in this run ({len(standing.locked_not_run)}): "
                  + ", ".join(code(claim) for claim in standing.locked_not_run) + "."]
    return lines


def _apart_counts(standing: Standing | None) -> str:
    """The README's note of the claims set apart, in its counts line (the README stays short: named on the
    claims page)."""
    if standing is None or not standing.confirmatory:
        return ""
    notes = [f"{len(standing.apart)} more exploratory, no verdict (added or changed after the protocol commit)"
             ] if standing.apart else []
    if standing.locked_not_run:
        notes.append(f"{len(standing.locked_not_run)} locked by the protocol but not in this run")
    return "".join(f"; {note}" for note in notes)


def _described(claims: pd.DataFrame) -> str:
    count = len(claims_page.descriptions(claims))
    described = f"; {count} descriptions apart (no replicate seed moves them)" if count else ""
    return claims_page.carried_count(claims) + described


def _verdicts(claims: pd.DataFrame, standing: Standing | None) -> pd.DataFrame:
    """The claims whose verdicts are published: the confirmatory ones, less those the protocol sets apart
    (the carried claims and the descriptions are listed apart: claims_page.carried_lines, description_lines)."""
    claims = claims_page.confirmatory(claims)
    if standing is None or not standing.apart:
        return claims
    return claims[~claims["id"].isin(list(standing.apart))]


def render(claims: pd.DataFrame, commit: str, pending: list[str] = (), standing: Standing | None = None) -> str:
    """The README's block, short (the README is a front door): the counts, and the claims' ids by
    verdict; docs/claims.md has each statement and its evidence. `pending`: ids of claims.yaml
    that the run has no verdict for (added after its commit). `standing` (report/protocol.py): an
    exploratory run gets no verdict headline; a confirmatory one names its protocol commit and the
    claims set apart."""
    _checked_ids(claims)
    if standing is not None and not standing.confirmatory:
        lines = [START, f"Generated by `make readme` from `results/claims.csv` (commit {text(commit)}): {len(claims)} "
                 "claims, no verdict: the run is of the exploratory seed block (the seeds the claims were developed "
                 "on), so its outcomes are exploratory. Each claim's outcome on those seeds, with its evidence: "
                 "[docs/claims.md](docs/claims.md)."]
        return "\n".join([*lines, *_not_in_run(pending), END])
    published = _verdicts(claims, standing)
    protocol = f"; protocol commit {text(standing.protocol)}" if standing is not None else ""
    lines = [START, f"Generated by `make readme` from `results/claims.csv` (commit {text(commit)}{protocol}): "
             f"{len(published)} claims, {verdict_counts(published)}{_apart_counts(standing)}{_described(claims)}. "
             "Each claim's statement, "
             "verdict and evidence (each test, its level and p-value): [docs/claims.md](docs/claims.md).", ""]
    for verdict, mark in MARK.items():
        ids = published.loc[published["verdict"] == verdict, "id"]
        lines.append(f"- {mark} ({len(ids)}): " + (", ".join(code(claim) for claim in ids) or "none"))
    return "\n".join([*lines, *_not_in_run(pending), END])


def render_page(claims: pd.DataFrame, commit: str, pending: list[str] = (), *, problem: str | None,
                standing: Standing | None = None) -> str:
    """docs/claims.md's block: one row per confirmatory claim (id, statement, verdict, its p Holm-adjusted
    in its family and over the study, evidence), then the descriptions apart, after the lines stating the
    error guarantees, its scale (`problem`: scale_problem of the claims table; compare_verdicts reads it) and
    the line stating its seed block and protocol (`standing`)."""
    _checked_ids(claims)
    exploratory = standing is not None and not standing.confirmatory
    published = _verdicts(claims, standing)
    adjusted = set(claims_page.ADJUSTED) <= set(published.columns)
    study = set(claims_page.STUDY) <= set(published.columns)
    column = "outcome on the exploratory seeds (no verdict)" if exploratory else "verdict"
    lines = [CLAIMS_PAGE_START, f"Generated by `make readme` from `results/claims.csv` (commit {text(commit)}): "
             f"{verdict_counts(published)}{' (exploratory outcomes)' if exploratory else ''}.", scale_line(problem),
             *claims_page.error_lines(claims), *_block_line(standing), *_apart(standing), *_not_in_run(pending), "",
             *claims_page.table_head(column, adjusted, study)]
    evidence = published["evidence"] if "evidence" in published.columns else pd.Series("", index=published.index)
    for row, proof in zip(published.to_dict("records"), evidence):
        cells = [code(row["id"]), text(row["statement"]), MARK[row["verdict"]],
                 *([claims_page.adjusted_p(row, study)] if adjusted else []), text(proof)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join([*lines, *claims_page.carried_lines(claims), *claims_page.description_lines(claims),
                      CLAIMS_PAGE_END])


def replace_block(page: str, block: str, path: Path, start: str = START, end: str = END) -> str:
    """`page` with its generated block replaced by `block`, which must be one block (check_block)."""
    if not markers_intact(page, start, end):
        raise InputError(f"{path}: expected one generated block between '{start}' and '{end}'")
    check_block(block, start, end)
    return page[:page.index(start)] + block + page[page.index(end) + len(end):]


def commit_of(table: str, any_results: bool) -> str:
    """The git commit that made a table, from its provenance record: a commit of this repository
    (an ancestor of HEAD) without uncommitted changes, unless any_results."""
    record = read_record(table, "its provenance record") or {}
    commit = record.get("git_commit")
    if any_results:
        return str(commit or "unknown")
    if not isinstance(commit, str):
        raise InputError(f"{table}: its provenance record has no field 'git_commit'; rebuild it with make figures "
                         "(or pass --allow-any-results)")
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise InputError(f"{table}: made by git_commit {commit[:80]!r}, not a clean commit; commit, rebuild "
                         "with make figures (or pass --allow-any-results)")
    try:
        known = subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"], capture_output=True).returncode == 0
    except OSError:
        known = False
    if not known:
        raise InputError(f"{table}: made by commit {commit[:12]}, which is not in this repository's history "
                         "(git merge-base --is-ancestor); rebuild with make figures (or pass --allow-any-results)")
    return commit


def check_paper_scale(table: str, any_results: bool, study=None) -> None:
    if not any_results:
        refuse_scale(table, scale_problem(table, study=study))


def refuse_scale(table: str, problem: str | None) -> None:
    if problem:
        raise InputError(f"{table}: not from the paper-scale profile ({problem}); run make figures first "
                         "(or pass --allow-any-results)")


def check_seed_block(path: str, table: pd.DataFrame, standing: Standing) -> None:
    """A table published beside the claims is of the seed block of their run: its seeds are that run's."""
    foreign = foreign_seeds(table, standing)
    if foreign:
        raise InputError(f"{path}: seeds {foreign[:5]} are not of the {standing.block} seed block of the run of the "
                         "claims (results/seed_plan.csv); rebuild it with make figures")


def replace_block_in(path: Path, block: str, start: str, end: str) -> str:
    """The text of `path` with its generated block replaced."""
    try:
        current = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {path}: {getattr(err, 'strerror', None) or err}; "
                         "give it with --readme / --claims-page / --study-page") from err
    return replace_block(current, block, path, start, end)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--claims", default="results/claims.csv")
    p.add_argument("--claims-file", default="claims.yaml",
                   help="this checkout's claims: those the run has no verdict for are named in the blocks")
    p.add_argument("--claims-schema", default="workflow/schemas/claims.schema.yaml", help="its JSON schema")
    p.add_argument("--protocol", default=LOCK, help="the protocol a confirmatory run's verdicts are published against "
                   "(make protocol); a run of the exploratory block is published as exploratory, lock or none")
    p.add_argument("--readme", default="README.md")
    p.add_argument("--claims-page", default="docs/claims.md", help="the page that gets every claim with its evidence")
    p.add_argument("--looks", default="results/looks", help="the group-sequential design's looks (none: no design)")
    p.add_argument("--stats", default="results/summary_stats.csv")
    p.add_argument("--seed-power", default="results/seed_power.csv", help="every rank test's power at the power sizes")
    p.add_argument("--references", default="results/reference/error_exact.csv")
    p.add_argument("--study-page", default="docs/bellman.md", help="the page that gets the results block")
    p.add_argument("--allow-any-results", action="store_true",
                   help="render results that are not from the paper-scale profile and a clean commit of this "
                        "repository (a preview: do not commit what it writes)")
    for study in STUDY_TABLES:
        p.add_argument(f"--{study.marker}-table", default=study.table, help=f"{study.what} (default: %(default)s)")
        p.add_argument(f"--{study.marker}-page", default=study.page, help="the page that gets its block")
    p.add_argument("--summary", default="results/summary.csv", help="the per-run summary ('What CBO needs')")
    p.add_argument("--sweep", default="results/sweep/cbo_sweep.csv", help="the CBO sweep's table")
    p.add_argument("--cost", default="results/cost.csv", help="the equal-cost table")
    p.add_argument("--runs", default="results/runs", help="the main runs' folder (the CBO runs' error curves)")
    p.add_argument("--figures-project", default=".", help="the checkout whose figures/ holds the run's figures")
    p.add_argument("--figures-folder", default=headline_figures.FOLDER,
                   help="where the headline figures go (%(default)s), linked from the pages")
    args = p.parse_args()
    claims_scale = scale_problem(args.claims)  # stated on the claims page, whichever the mode
    if not args.allow_any_results:
        refuse_scale(args.claims, claims_scale)
    check_paper_scale(args.stats, args.allow_any_results)
    claims = load_csv(args.claims, "the claims' verdicts", columns=("id", "statement", "verdict"))
    if not claims["verdict"].isin(VERDICTS).all():
        raise InputError(f"{args.claims}: a verdict other than {sorted(VERDICTS)}; rerun rule claims")
    metrics = [f"{m}_{s}" for m in ("final_rel_error", "final_rel_error_exact") for s in ("ci_low", "ci_high")]
    stats = load_csv(args.stats, "the summary over seeds", columns=metrics,
                     finite=["n", *(f"{m}_{s}" for m in ("final_rel_error", "final_rel_error_exact")
                                    for s in ("mean", "iqm"))])
    references = load_csv(args.references, "the learned Q* against the exact Q", columns=("made_by",),
                          finite=("error_exact_normalised",))
    claims_commit, stats_commit = (commit_of(table, args.allow_any_results) for table in (args.claims, args.stats))
    finals = ("final_rel_error", "final_rel_error_exact")
    coverage = coverage_at_spread(load_csv(args.summary, "the per-run summary", columns=(*GROUP, *finals)), finals)
    checkout_claims = load_claims(Path(args.claims_file), Path(args.claims_schema))
    pending = [claim["id"] for claim in checkout_claims["claims"] if claim["id"] not in set(claims["id"])]
    # a confirmatory run is published against the committed protocol, or refused; an exploratory one as such
    standing = judge(Path.cwd(), args.claims, claims_commit, Path(args.claims_file), checkout_claims,
                     Path(args.protocol), args.allow_any_results)
    pages: dict[Path, str] = {}  # every page as it will be written: nothing is written until all are rendered
    placed: dict[Path, list[tuple[str, str]]] = {}

    note = block_note(standing)  # its one value, the protocol commit, is git's hex (or 'uncommitted')

    def put(page: str, block: str, start: str, end: str, noted: bool = True) -> None:
        """Replace a block in the page as rendered so far (a page may hold several blocks); a block of the
        study pages opens with the seed block of its run (`noted`: the claims' blocks say it their way)."""
        if noted:
            block = block.replace(start + "\n", f"{start}\n{note}\n", 1)
        path = Path(page)
        pages[path] = (replace_block(pages[path], block, path, start, end) if path in pages
                       else replace_block_in(path, block, start, end))
        placed.setdefault(path, []).append((start, end))

    with cells_of(args.claims):
        put(args.readme, render(claims, claims_commit, pending, standing), START, END, noted=False)
        put(args.claims_page, render_page(claims, claims_commit, pending, problem=claims_scale, standing=standing),
            CLAIMS_PAGE_START, CLAIMS_PAGE_END, noted=False)
    with cells_of(args.looks):
        design = looks_page.run_design(Path(args.protocol), Path(args.looks))
        put(args.claims_page, looks_page.render_looks(design, Path(args.looks), claims_commit), looks_page.START,
            looks_page.END, noted=False)
    previous = publications_page.render_previous(Path.cwd(), claims, claims_commit, standing.confirmatory,
                                                 standing.apart if standing.confirmatory else ())
    put(args.claims_page, previous, publications_page.START, publications_page.END, noted=False)
    with cells_of(f"{args.stats} or {args.references}"):
        put(args.study_page, render_results(stats, references, stats_commit, coverage), RESULTS_START, RESULTS_END)
    check_paper_scale(args.seed_power, args.allow_any_results)
    power = load_csv(args.seed_power, "the rank tests' power", columns=("id", "test", "paired", "n_first", "n_second"),
                     finite=("p", "reverse_p"))
    check_powers(power, args.seed_power)
    with cells_of(args.seed_power):
        put(args.study_page, render_seed_power(power, commit_of(args.seed_power, args.allow_any_results)),
            SEED_POWER_START, SEED_POWER_END)
    for table in (args.summary, args.sweep, args.cost):
        check_paper_scale(table, args.allow_any_results)
        check_seed_block(table, load_csv(table, "a table of the study"), standing)
    for name, block in bellman_page.blocks(lambda table: commit_of(table, args.allow_any_results), Path(args.summary),
                                         Path(args.sweep), Path(args.cost), Path(args.runs)).items():
        put(args.study_page, block, *markers(name))
    for study in STUDY_TABLES:
        option = study.marker.replace("-", "_")
        path, page = getattr(args, f"{option}_table"), getattr(args, f"{option}_page")
        check_paper_scale(path, args.allow_any_results, study)
        table = load_csv(path, study.what, columns=study.columns, finite=study.finite)
        check_seed_block(path, table, standing)
        start, end = markers(study.marker)
        with cells_of(path):
            put(page, study.render(table, commit_of(path, args.allow_any_results), start, end), start, end)
    figures_folder = Path(args.figures_folder)
    figures = headline_figures.render_figures(Path(args.figures_project), figures_folder, claims_commit,
                                              standing.block, args.allow_any_results)
    role_pages = {headline_figures.README: args.readme, headline_figures.BELLMAN: args.study_page,
                  headline_figures.AGENTS: args.agents_results_page, headline_figures.OFFLINE: args.offline_results_page}
    for role in headline_figures.roles():
        put(role_pages[role], headline_figures.render_block(role, Path(role_pages[role]), figures_folder, claims_commit,
                                                            args.allow_any_results),
            headline_figures.START, headline_figures.END)
    for path, blocks in placed.items():  # no inserted value broke a block placed before it
        for start, end in blocks:
            if not markers_intact(pages[path], start, end):
                raise InputError(f"{path}: the generated block '{start}' lost its markers while rendering")
    # all pages or none: the README's verdicts never disagree with the claims page's evidence
    try:  # the one thing made before the pages: an empty folder for the figures, if it is new
        figures_folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputError(f"cannot make {figures_folder}: {err.strerror or err}; no file was changed") from err
    replace_all({**{path: content.encode() for path, content in pages.items()}, **figures})
    print(f"wrote {len(claims)} {'verdicts' if standing.confirmatory else 'exploratory outcomes'} ({standing.block} "
          f"seed block) into {args.readme}, {len(stats)} result rows and the "
          f"blocks of 'What CBO needs' into {args.study_page} and "
          f"the agents' and the offline study's tables into their pages, {len(headline_figures.HEADLINES)} headline "
          f"figures into {figures_folder}")

if __name__ == "__main__":
    run(main)
