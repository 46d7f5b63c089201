"""render_readme publishes all its pages or none (issue 39, item 6): a read-only docs/ used to leave
README.md with new verdicts beside the old evidence; a rename failing midway puts back the pages
already replaced. And no value it inserts, --allow-any-results included, survives raw: a cell or a
record's commit holding a line break, a tag, a pipe, a backtick or a block's end marker is escaped,
and the page it leaves renders again."""

import errno
import os
import re
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from rlstudy.bellman.results.bellman_page import NAMES
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import read_record
from rlstudy.core.markdown import markers
from rlstudy.report.study_tables import STUDY_TABLES

from hostile import cli, one_line_error  # noqa: F401 (cli: a fixture)
from test_hostile_render import HEAD, in_repository, published_results, render_args  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(not HEAD, reason="not a git checkout")

BLOCKS = ("claims", "claims-table", "looks", "previous-publications", "results", "seed-power", *NAMES,
          *(study.marker for study in STUDY_TABLES))
# a line break, a script, a pipe, a backtick, and every block's end and start marker
HOSTILE = "x\n<script>alert(1)</script> | `tick` " + " ".join(f"{end} {start}" for start, end in map(markers, BLOCKS))
PAGES = ("--readme", "--claims-page", "--study-page", "--agents-results-page", "--offline-results-page")


def pages_in_docs(paths: dict, docs: Path) -> dict:
    """The fixture's pages with every page but the README moved into `docs/`, as in the repository."""
    docs.mkdir()
    moved = {}
    for option in ("--claims-page", "--study-page", "--agents-results-page", "--offline-results-page"):
        moved[option] = docs / paths[option].name
        if not moved[option].exists():
            shutil.move(paths[option], moved[option])
    return {**paths, **moved, "--budget-results-page": moved["--study-page"]}


def contents(paths: dict) -> dict:
    return {option: paths[option].read_bytes() for option in PAGES}


def leftovers(*folders: Path) -> list:
    return [path for folder in folders for path in folder.iterdir() if path.name.endswith(".tmp")]


def test_a_read_only_docs_folder_changes_no_page(tmp_path, cli, in_repository, monkeypatch):
    """The probe: README.md was rewritten, then docs/claims.md failed; now every page's temporary
    file is written before any page is replaced."""
    paths = pages_in_docs(published_results(tmp_path), tmp_path / "docs")
    before = contents(paths)
    docs = tmp_path / "docs"
    docs.chmod(0o555)
    real = tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == docs:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real(*args, dir=dir, **kwargs)

    try:
        with monkeypatch.context() as patch:
            if os.geteuid() == 0:  # root writes in a read-only folder: refuse as the kernel refuses anyone else
                patch.setattr(tempfile, "mkstemp", mkstemp)
            one_line_error(*cli("report.cli.render_readme", *render_args(paths)),
                           f"cannot write {docs / 'claims.md'}", "no file was changed")
        assert contents(paths) == before and not leftovers(tmp_path, docs)
    finally:
        docs.chmod(0o755)
    status, err = cli("report.cli.render_readme", *render_args(paths))  # writable again: all pages written
    assert status == 0, err
    assert all(contents(paths)[option] != before[option] for option in PAGES)


def test_a_rename_failing_midway_puts_back_the_pages_already_replaced(tmp_path, cli, in_repository, monkeypatch):
    paths = pages_in_docs(published_results(tmp_path), tmp_path / "docs")
    before = contents(paths)
    real, calls = os.replace, []

    def replace(source, target):
        calls.append(Path(target))
        if len(calls) == 3:  # README.md and docs/claims.md are replaced by then
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(source, target)

    monkeypatch.setattr(os, "replace", replace)
    status, err = cli("report.cli.render_readme", *render_args(paths))
    one_line_error(status, err, f"cannot write {paths['--study-page']}", "no file was changed")
    assert calls[:3] == [paths["--readme"], paths["--claims-page"], paths["--study-page"]]
    assert contents(paths) == before and not leftovers(tmp_path, tmp_path / "docs")


def hostile_tables(paths: dict) -> None:
    """A hostile value in every text cell of every table render_readme reads (and in a power
    column's name), each table keeping its record (which names HOSTILE as its commit)."""
    def rewrite(option: str, change) -> None:
        path = paths[option]
        save_csv(path, change(pd.read_csv(path)), read_record(path, "its record"))

    rewrite("--claims", lambda t: t.assign(statement=HOSTILE, evidence=HOSTILE))
    run = paths["--stats"].parent / "runs" / "errors.csv"  # its parameters are quoted by the claims page's scale line
    record = read_record(run, "its record")
    params = {**record["parameters"]["params"], "epochs": HOSTILE}
    save_csv(run, pd.read_csv(run), {**record, "parameters": {**record["parameters"], "params": params}})
    rewrite("--stats", lambda t: t.assign(dataset=HOSTILE, task=HOSTILE, setting=HOSTILE, estimator=HOSTILE))
    rewrite("--references", lambda t: t.assign(dataset=HOSTILE, task=HOSTILE, made_by=HOSTILE))
    rewrite("--seed-power", lambda t: t.assign(id=HOSTILE, test=HOSTILE, n_first=HOSTILE, effect=HOSTILE)
            .rename(columns={"power_at_10": f"power_at_{HOSTILE}"}))
    rewrite("--summary", lambda t: t.assign(dataset=HOSTILE, setting="cbo" + HOSTILE))
    rewrite("--sweep", lambda t: t.assign(grid=HOSTILE, x=HOSTILE, x_value=HOSTILE, y=HOSTILE, y_value=HOSTILE,
                                          seed=HOSTILE))
    rewrite("--cost", lambda t: t.assign(dataset=HOSTILE, task=HOSTILE, estimator=HOSTILE, setting=HOSTILE))
    rewrite("--agents-results-table", lambda t: t.assign(agent=HOSTILE, env=HOSTILE, seed=HOSTILE, episodes=HOSTILE,
                                                         steps=HOSTILE))
    rewrite("--offline-results-table", lambda t: t.assign(env=HOSTILE, seed=HOSTILE, learner=HOSTILE,
                                                          iterations=HOSTILE))
    rewrite("--budget-results-table", lambda t: t.assign(task=HOSTILE, estimator=HOSTILE, setting=HOSTILE))


UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def assert_intact(page: str, where: str) -> None:
    """No tag, each block's markers once, and every row of a table as many cells as its header."""
    assert "<script>" not in page and "&lt;script&gt;" in page, where
    for start, end in map(markers, BLOCKS):
        assert page.count(start) == page.count(end) <= 1, (where, start)
    header = None
    for line in page.splitlines():
        if not line.startswith("|"):
            header = None
        elif header is None:
            header = len(UNESCAPED_PIPE.findall(line))
        else:
            assert len(UNESCAPED_PIPE.findall(line)) == header, (where, line)


def test_hostile_cells_and_commits_are_escaped_in_every_block_and_render_again(tmp_path, cli, in_repository):
    """--allow-any-results skips the checks of scale and commit, not the escaping."""
    paths = published_results(tmp_path, commit=HOSTILE)
    hostile_tables(paths)
    status, err = cli("report.cli.render_readme", *render_args(paths, "--allow-any-results"))
    assert status == 0, err
    first = contents(paths)
    for option, page in first.items():
        assert_intact(page.decode(), option)
    status, err = cli("report.cli.render_readme", *render_args(paths, "--allow-any-results"))
    assert status == 0, err  # the pages it wrote are pages it can render into again
    assert contents(paths) == first


def test_a_text_cell_where_a_number_is_shown_is_one_line(tmp_path, cli, in_repository):
    paths = published_results(tmp_path)
    table = paths["--agents-results-table"]
    save_csv(table, pd.read_csv(table).assign(solved_return=HOSTILE), read_record(table, "its record"))
    before = contents(paths)
    one_line_error(*cli("report.cli.render_readme", *render_args(paths)), f"{table}: a cell its generated block")
    assert contents(paths) == before


def test_the_claims_page_states_its_scale(tmp_path, cli, in_repository):
    """What compare_verdicts reads: paper for the published results, not the paper's for a preview
    of a smoke run (render_readme's own check of the runs' parameters against config.yaml)."""
    paths = published_results(tmp_path)
    assert cli("report.cli.render_readme", *render_args(paths))[0] == 0
    assert "\nScale: paper (" in paths["--claims-page"].read_text()
    smoke = published_results(tmp_path / "smoke", epochs=3)
    assert cli("report.cli.render_readme", *render_args(smoke, "--allow-any-results"))[0] == 0
    page = smoke["--claims-page"].read_text()
    assert "\nScale: not the paper's (run " in page and "epochs 3" in page
