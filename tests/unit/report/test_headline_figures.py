"""The published run's headline figures (issue 41): small copies with provenance, refused from another
run, linked from the pages; the committed ones are the committed manifest's run's."""

import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from rlstudy.core.errors import InputError
from rlstudy.core.provenance import PROVENANCE_SUFFIX
from rlstudy.report import headline_figures
from rlstudy.report.headline_figures import FOLDER, HEADLINES, MAX_WIDTH, render_block, render_figures
from rlstudy.report.manifest_schema import load_manifest

from hostile import deadline
from test_hostile_render import headline_sources

ROOT = Path(__file__).resolve().parents[3]
COMMIT = "a" * 40


def test_each_headline_is_made_small_with_its_source_in_its_record(tmp_path):
    headline_sources(tmp_path, COMMIT, "confirmatory")
    written = render_figures(tmp_path, tmp_path / "out", COMMIT, "confirmatory", any_results=False)
    assert len(written) == 2 * len(HEADLINES)
    for headline in HEADLINES:
        small = written[tmp_path / "out" / headline.file]
        assert Image.open(io.BytesIO(small)).size == (MAX_WIDTH, round(400 * MAX_WIDTH / 1500))
        record = json.loads(written[tmp_path / "out" / f"{headline.file}{PROVENANCE_SUFFIX}"])
        source = (tmp_path / headline.source).read_bytes()
        assert record["source"] == {"path": headline.source, "sha256": hashlib.sha256(source).hexdigest(),
                                    "git_commit": COMMIT, "scale": "paper", "seed_block": "confirmatory",
                                    "inputs": {}}
        assert record["artefact"]["sha256"] == hashlib.sha256(small).hexdigest()
    again = render_figures(tmp_path, tmp_path / "out", COMMIT, "confirmatory", any_results=False)
    assert again == written  # byte for byte: no date, no software tag


@pytest.mark.parametrize("commit, block, field", [("b" * 40, "confirmatory", "git_commit"),
                                                  (COMMIT, "exploratory", "seed_block")])
def test_a_figure_of_another_run_is_refused_unless_any_results(tmp_path, commit, block, field):
    headline_sources(tmp_path, commit, block)
    with pytest.raises(InputError, match=f"{re.escape(HEADLINES[0].source)}: not of the run the pages publish: {field}"):
        render_figures(tmp_path, tmp_path / "out", COMMIT, "confirmatory", any_results=False)
    assert render_figures(tmp_path, tmp_path / "out", COMMIT, "confirmatory", any_results=True)


def test_a_figure_without_its_record_or_of_smoke_scale_is_refused(tmp_path):
    headline_sources(tmp_path, COMMIT, "confirmatory")
    record = tmp_path / f"{HEADLINES[-1].source}{PROVENANCE_SUFFIX}"
    record.write_text(record.read_text().replace('"paper"', '"smoke"'))
    with pytest.raises(InputError, match="scale 'smoke'"):
        render_figures(tmp_path, tmp_path / "out", COMMIT, "confirmatory", any_results=False)
    record.unlink()
    with pytest.raises(InputError, match="no provenance record beside it"):
        render_figures(tmp_path, tmp_path / "out", COMMIT, "confirmatory", any_results=False)


def test_the_pages_link_the_figures_relative_to_themselves_and_refuse_an_odd_folder(tmp_path):
    readme = render_block(headline_figures.README, Path("README.md"), Path(FOLDER), COMMIT)
    study = render_block(headline_figures.BELLMAN, Path("docs/bellman.md"), Path(FOLDER), COMMIT)
    assert "](docs/figures/q_control_sgd.png)" in readme and "](figures/q_control_sgd.png)" in study
    assert f"commit {COMMIT}, paper scale" in readme and "preview" not in readme
    assert "a preview" in render_block(headline_figures.README, Path("README.md"), Path(FOLDER), COMMIT, preview=True)
    assert "](figures/reference_error.png)" in study and "reference_error" not in readme
    with pytest.raises(InputError, match="plain path"):
        render_block(headline_figures.README, Path("README.md"), Path("docs/my figures)"), COMMIT)


def _links(page: Path) -> list[str]:
    text = page.read_text()
    block = text[text.index(headline_figures.START):text.index(headline_figures.END)]
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", block)


def test_the_committed_headlines_are_the_committed_manifests_run():
    """What the README shows is what the manifest lists: each figure's source is the manifest's file, byte
    for byte, made by the manifest's run; every page links each of its headlines and nothing else."""
    manifest_path = ROOT / "docs" / "manifest.json"
    if not manifest_path.exists():
        pytest.skip("no published run yet (docs/manifest.json): make readme publishes one")
    manifest = json.loads(manifest_path.read_text())
    wanted = {name for headline in HEADLINES for name in (headline.file, f"{headline.file}{PROVENANCE_SUFFIX}")}
    assert {path.name for path in (ROOT / FOLDER).iterdir()} == wanted  # no figure of an earlier headline list
    for headline in HEADLINES:
        figure = ROOT / FOLDER / headline.file
        record = json.loads((ROOT / FOLDER / f"{headline.file}{PROVENANCE_SUFFIX}").read_text())
        assert record["artefact"]["sha256"] == hashlib.sha256(figure.read_bytes()).hexdigest(), headline.name
        assert record["source"]["sha256"] == manifest["artefacts"][headline.source]["sha256"], headline.name
        assert record["source"]["git_commit"] in manifest["commits_of_artefacts"], headline.name
        assert record["source"]["seed_block"] == manifest["seed_block"]["block"], headline.name
    # the source of each and every input it names (records written since they name them) are the manifest's
    assert headline_figures.inputs_problems(ROOT / FOLDER, load_manifest(manifest_path)) == []
    pages = {headline_figures.README: ROOT / "README.md", headline_figures.BELLMAN: ROOT / "docs/bellman.md",
             headline_figures.AGENTS: ROOT / "docs/agents.md", headline_figures.OFFLINE: ROOT / "docs/offline.md"}
    for role, page in pages.items():
        wanted = [headline.file for headline in HEADLINES if role in headline.pages]
        assert [Path(link).name for link in _links(page)] == wanted, page
        assert all((page.parent / link).is_file() for link in _links(page)), page


def test_a_figure_that_is_not_the_bytes_its_record_names_is_refused(tmp_path):
    headline_sources(tmp_path, COMMIT, "confirmatory")
    (tmp_path / HEADLINES[0].source).write_bytes(b"not the figure")
    with pytest.raises(InputError, match="changed or truncated since it was written"):
        render_figures(tmp_path, tmp_path / "out", COMMIT, "confirmatory", any_results=True)


def test_a_figure_is_recorded_with_the_inputs_it_was_drawn_from_and_they_are_checked(tmp_path):
    headline_sources(tmp_path, COMMIT, "confirmatory")
    source = tmp_path / HEADLINES[0].source
    record_path = source.with_name(source.name + PROVENANCE_SUFFIX)
    record = json.loads(record_path.read_text())
    record["inputs"] = {"curves": {"path": "results/summary.csv", "sha256": "b" * 64}}
    record_path.write_text(json.dumps(record))
    written = render_figures(tmp_path, tmp_path / "out", COMMIT, "confirmatory", any_results=False)
    for path, data in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    mine = json.loads((tmp_path / "out" / f"{HEADLINES[0].file}{PROVENANCE_SUFFIX}").read_text())
    assert mine["source"]["inputs"] == {"curves": {"path": "results/summary.csv", "sha256": "b" * 64}}
    artefacts = {headline.source: {"sha256": hashlib.sha256((tmp_path / headline.source).read_bytes()).hexdigest()}
                 for headline in HEADLINES}
    manifest = {"artefacts": {**artefacts, "results/summary.csv": {"sha256": "b" * 64}}}
    assert headline_figures.inputs_problems(tmp_path / "out", manifest) == []
    manifest["artefacts"]["results/summary.csv"] = {"sha256": "c" * 64}
    assert headline_figures.inputs_problems(tmp_path / "out", manifest) == [
        f"{HEADLINES[0].file}: its curves results/summary.csv is not the manifest's"]


@pytest.mark.parametrize("odd", ["fifo source", "zero source", "fifo output", "zero record"])
def test_a_fifo_or_a_link_to_dev_zero_among_the_headline_figures_is_refused_at_once(tmp_path, odd):
    import os

    headline_sources(tmp_path, COMMIT, "confirmatory")
    out = tmp_path / "out"
    out.mkdir()
    where, what = odd.split()
    path = {"source": tmp_path / HEADLINES[1].source, "output": out / HEADLINES[1].file,
            "record": tmp_path / f"{HEADLINES[1].source}{PROVENANCE_SUFFIX}"}[what]
    path.unlink(missing_ok=True)
    if where == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(InputError) as err:
        with deadline(10):
            render_figures(tmp_path, out, COMMIT, "confirmatory", any_results=False)
    message = str(err.value)
    assert "\n" not in message and path.name in message and ("FIFO" in message or "link" in message), message
