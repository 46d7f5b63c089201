"""docs/ci.md's numbers of the published manifest are generated from it (rlstudy.report.cli.render_manifest_size):
the page once said 2,950 artefacts and 0.8 MB where the manifest had 3,523 and 0.97 MB."""

import json
from pathlib import Path

import pytest

from rlstudy.core.errors import InputError
from rlstudy.core.markdown import generated_block
from rlstudy.report.cli.render_manifest_size import END, START, render

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "docs" / "manifest.json"


def test_the_block_gives_the_manifests_counts_and_size():
    manifest = {"scale": "smoke", "snakemake_args": [], "counts": {"artefacts": 3523, "measured": 768,
                                                                  "provenance_records": 3500}}
    block = render(manifest, Path("m.json"), 971_450)
    assert "3,523 artefacts listed (768 of them measured)" in block and "0.97 MB (971,450 bytes)" in block
    assert "smoke scale)" in block


@pytest.mark.parametrize("counts", [None, {"artefacts": "3523", "measured": 1, "provenance_records": 1},
                                    {"artefacts": 1, "measured": -1, "provenance_records": 1}])
def test_a_manifest_without_counts_is_refused(counts):
    with pytest.raises(InputError, match="rewrite it with make manifest"):
        render({"counts": counts}, Path("m.json"), 1)


def test_the_page_holds_the_published_manifests_numbers():
    if not MANIFEST.is_file():
        pytest.skip("no published manifest (docs/manifest.json)")
    data = MANIFEST.read_bytes()
    expected = render(json.loads(data), Path("docs/manifest.json"), len(data))
    assert generated_block((ROOT / "docs" / "ci.md").read_text(), START, END) == expected, (
        "docs/ci.md's manifest-size block is stale: python -m rlstudy.report.cli.render_manifest_size")
