"""Claims carried from an earlier protocol's publication (claims/publication.py): the publication written
from a manifest (a hostile one refused), a carried claim's row with the published verdict and outside both
Holm procedures, and the refusals of a claim that cannot be carried."""

import copy
import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rlstudy.claims.publication import carried_verdicts, load_publication, load_publications
from rlstudy.claims.rules import CARRIED, FAILS, HOLDS, INCONCLUSIVE, Carried, decide
from rlstudy.core.errors import InputError

from hostile import cli, one_line_error  # noqa: F401 (cli: a fixture)

ROOT = Path(__file__).resolve().parents[3]
PUBLICATION = ROOT / "docs" / "publications" / "protocol-1.json"
DEFAULTS = {"min_n": 2, "min_share": 1.0, "level": 0.05,
            "planning": {"power": 0.8, "superiority": 0.75, "share": 0.99, "sizes": [10, 40], "draws": 500, "seed": 0,
                         "max_seeds": 200}}


def runs(estimator, finals):
    return pd.DataFrame({"estimator": estimator, "seed": range(len(finals)), "final": finals})


def claim(name, lower, higher, **more):
    test = {"kind": "ranking", "table": "summary", "metric": "final", "lower": {"estimator": lower},
            "higher": {"estimator": higher}, "paired": True}
    return {"id": name, "source": "s", "statement": "s", "estimand": "e", "family": "f", "tests": [test], **more}


def manifest() -> dict:
    return json.loads((ROOT / "docs" / "manifest.json").read_text())


def test_the_publication_is_the_manifests_verdicts(tmp_path, cli):
    """The newest committed publication is the command's output on the committed manifest, byte for byte."""
    newest = max(PUBLICATION.parent.glob("protocol-*.json"), key=lambda path: int(path.stem.split("-")[1]))
    protocol = int(newest.stem.split("-")[1])
    out = tmp_path / newest.name
    status, err = cli("report.cli.write_publication", "--protocol", protocol, "--manifest",
                      ROOT / "docs" / "manifest.json", "--out", out)
    assert status == 0, err
    assert out.read_bytes() == newest.read_bytes()
    written = load_publication(out)
    assert {claim: entry["verdict"] for claim, entry in written["verdicts"].items()} == manifest()["verdicts"]
    commits = manifest()["commits_of_artefacts"]
    assert written["protocol"] == protocol and written["commit"] == max(commits, key=commits.get)


@pytest.mark.parametrize("change, fragment", [
    (lambda m: m["verdicts"].update({"a b; rm -rf /": "holds"}), "verdicts"),
    (lambda m: m["verdicts"].update({"x": "proven"}), "verdicts.x"),
    (lambda m: m["seed_block"].update(block="exploratory"), "exploratory block"),
    (lambda m: m.update(commits_of_artefacts={"none": 3}), "not a clean commit"),
])
def test_a_hostile_manifest_is_refused_in_one_line(tmp_path, cli, change, fragment):
    record = manifest()
    change(record)
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(record))
    out = tmp_path / "protocol-1.json"
    status, err = cli("report.cli.write_publication", "--protocol", 1, "--manifest", path, "--out", out)
    one_line_error(status, err, fragment)
    assert not out.exists()


def test_a_hostile_publication_is_refused_in_one_line(tmp_path):
    good = json.loads(PUBLICATION.read_text())
    for bad, fragment in ((dict(good, verdicts={"ok": {"verdict": "maybe"}}), "verdicts.ok.verdict"),
                          (dict(good, verdicts={"../x": {"verdict": "holds"}}), "verdicts"),
                          (dict(good, commit="HEAD"), "commit"), ([1, 2], "(top level)")):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(InputError, match=r"bad\.json: not a protocol's publication") as err:
            load_publication(path)
        assert fragment in str(err.value) and "\n" not in str(err.value)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (3 << 20))
    with pytest.raises(InputError, match="over the"):
        load_publication(big)
    link = tmp_path / "link.json"
    os.symlink(PUBLICATION, link)
    with pytest.raises(InputError, match="link"):
        load_publication(link)


def test_a_carried_claim_keeps_its_verdict_outside_both_holm_procedures():
    """Three claims of one family, each's sign test at p = 1/32 alone; c is carried. a and b are adjusted
    as if c did not exist (Holm over two: 1/16), c keeps the published verdict, unadjusted."""
    table = pd.concat([runs("UR", [0.1, 0.2, 0.3, 0.4, 0.5]), runs("DS", [0.2, 0.3, 0.4, 0.5, 0.6]),
                       runs("BFF", [0.15, 0.25, 0.35, 0.45, 0.55])])
    tested = [claim("a", "UR", "DS"), claim("b", "UR", "BFF")]
    carried = claim("c", "BFF", "DS", carried=1)
    source = {"c": Carried(FAILS, 1, "2" * 40)}
    rows = decide([*tested, carried], {"summary": table}, DEFAULTS, carried=source)
    alone = decide(tested, {"summary": table}, DEFAULTS)
    for key in ("p_adjusted", "reverse_p_adjusted", "p_study", "reverse_p_study", "verdict", "study_verdict"):
        assert [row[key] for row in rows[:2]] == [row[key] for row in alone], key
    assert [row["p_adjusted"] for row in rows[:2]] == pytest.approx([1 / 16, 1 / 16])
    c = rows[2]
    assert c["role"] == CARRIED and c["verdict"] == c["study_verdict"] == FAILS  # the published one, not 1/32's
    assert c["p"] == c["p_adjusted"] == c["p_study"] == pytest.approx(1 / 32)  # this run's data, unadjusted
    assert c["evidence"].startswith("[carried from protocol 1's publication (commit 2222222)] this run's data")
    assert c["carried_from"] == f"protocol 1, commit {'2' * 40}" and rows[0]["carried_from"] == ""
    with pytest.raises(InputError, match="'c' is carried"):
        decide([*tested, carried], {"summary": table}, DEFAULTS)


def test_a_claim_that_cannot_be_carried_is_refused_naming_it(tmp_path):
    publications, where = load_publications([str(PUBLICATION)])
    publication = publications[1]
    shipped = yaml.safe_load((ROOT / "claims.yaml").read_text())["claims"]
    kept = carried_verdicts(shipped, publications, where)
    assert kept and {c.verdict for c in kept.values()} <= {HOLDS, FAILS} and {c.protocol for c in kept.values()} == {1}
    undecided = next(c for c in shipped if publication["verdicts"][c["id"]]["verdict"] == INCONCLUSIVE)
    for claims, fragment in (([dict(undecided, carried=1)], "its verdict there is 'inconclusive'"),
                             ([dict(claim("new", "UR", "DS"), carried=1)], "has no verdict for it"),
                             ([dict(claim("later", "UR", "DS"), carried=2)], "protocol 2's publication was not given")):
        with pytest.raises(InputError, match="claim '") as err:
            carried_verdicts(claims, publications, where)
        assert fragment in str(err.value) and claims[0]["id"] in str(err.value)
    with pytest.raises(InputError, match="a second publication of protocol 1"):
        load_publications([str(PUBLICATION), str(PUBLICATION)])


def test_the_shipped_carried_claims_are_decided_by_sign_share_or_description_tests():
    """The rule claims.yaml marks them by: protocol 1 decided them, and every test is a sign test (paired),
    an exact binomial share test or a description of the runs made (not a per-run test)."""
    publication = load_publication(PUBLICATION)
    for claim_ in yaml.safe_load((ROOT / "claims.yaml").read_text())["claims"]:
        if "carried" not in claim_:
            continue
        assert publication["verdicts"][claim_["id"]]["verdict"] in (HOLDS, FAILS), claim_["id"]
        for test in claim_["tests"]:
            assert test.get("paired") if test["kind"] != "share" else "run_noise" not in test, claim_["id"]


def test_the_claims_schema_refuses_a_carried_description():
    from rlstudy.core.config import ConfigError, validate_config
    claims = yaml.safe_load((ROOT / "claims.yaml").read_text())
    broken = copy.deepcopy(claims)
    broken["claims"][0].update(carried=1, description="fixed")
    with pytest.raises(ConfigError):
        validate_config(broken, ROOT / "workflow" / "schemas" / "claims.schema.yaml")
    broken["claims"][0].pop("description")
    broken["claims"][0]["carried"] = 0
    with pytest.raises(ConfigError):
        validate_config(broken, ROOT / "workflow" / "schemas" / "claims.schema.yaml")
