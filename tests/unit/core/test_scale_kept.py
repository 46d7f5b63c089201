"""A checkout keeps the scale of its first build (src/rlstudy/core/scale.py): a run at another
scale is refused with the command that keeps it, or rebuilds with --config rescale=true."""

import pytest
import yaml

from rlstudy.core.config import ConfigError, validate_config
from rlstudy.core.scale import RECORD, check_scale, files_scale, record_scale, recorded_scale

from hostile import ROOT, SCHEMA


def test_the_shipped_files_name_their_scale():
    assert yaml.safe_load((ROOT / "config.yaml").read_text())["scale"] == "paper"
    assert yaml.safe_load((ROOT / "workflow/profiles/smoke/scale.yaml").read_text())["scale"] == "smoke"
    profile = yaml.safe_load((ROOT / "workflow/profiles/smoke/config.yaml").read_text())
    assert profile["config"] == {"scale": "smoke"}  # the mark that shows a lost scale.yaml
    assert profile["configfile"][-1] == "workflow/profiles/smoke/scale.yaml"
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    del config["scale"]
    with pytest.raises(ConfigError, match="'scale' is a required property"):
        validate_config(config, SCHEMA)


def test_the_recorded_scale_is_kept_unless_rescale(tmp_path):
    paper = {"scale": "paper"}
    check_scale(paper, "paper", {}, ["config.yaml"], tmp_path)  # nothing recorded: any scale
    record_scale("smoke", tmp_path)
    assert recorded_scale(tmp_path) == "smoke" and (tmp_path / RECORD).read_text() == "smoke\n"
    check_scale({"scale": "smoke"}, "smoke", {}, ["config.yaml"], tmp_path)
    with pytest.raises(ConfigError, match=r"this checkout was built at smoke scale \(results/\.scale\) and this run's "
                                          r"config is at paper scale \(config files: config\.yaml\); to keep smoke "
                                          r"scale: make rerun TARGET=\.\.\..*to build at paper scale instead: "
                                          r"--config rescale=true"):
        check_scale(paper, "paper", {}, ["config.yaml"], tmp_path)
    check_scale({**paper, "rescale": True}, "paper", {}, ["config.yaml"], tmp_path)


def test_a_profile_that_lost_its_scale_file_is_refused(tmp_path):
    """--profile workflow/profiles/smoke --configfile more.yaml: the profile's list, scale.yaml with it,
    is replaced; its `config: {scale: smoke}` stays and shows it."""
    assert files_scale([{"scale": "paper", "seed": 1}, {"cbo": {}}]) == "paper"
    assert files_scale([{"scale": "paper"}, {"scale": "smoke"}, {"seed": 2}]) == "smoke"
    with pytest.raises(ConfigError, match=r"--config scale=smoke, but the config files give scale paper .*name them "
                                          r"all, --configfile config\.yaml workflow/profiles/smoke/scale\.yaml more\.yaml"):
        check_scale({"scale": "smoke"}, "paper", {"scale": "smoke"}, ["more.yaml", "config.yaml"], tmp_path)
    check_scale({"scale": "smoke"}, "smoke", {"scale": "smoke"}, ["config.yaml", "scale.yaml"], tmp_path)
