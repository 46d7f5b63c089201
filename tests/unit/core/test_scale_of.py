"""The scale a merged config runs at (core/scale.py): what the report's front page and captions name."""

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from rlstudy.core.config import ConfigError
from rlstudy.core.scale import CUSTOM, PAPER, SMOKE, scale_of

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = yaml.safe_load((ROOT / "config.yaml").read_text())


def smoke_config():
    """config.yaml with the smoke profile's sizes merged over it, as Snakemake merges config files."""
    config = copy.deepcopy(SHIPPED)
    update_config(config, yaml.safe_load((ROOT / "workflow/profiles/smoke/scale.yaml").read_text()))
    return config


def test_the_shipped_config_is_the_paper_scale_and_the_smoke_profile_the_smoke_scale():
    assert scale_of(copy.deepcopy(SHIPPED), ROOT).name == PAPER
    assert scale_of(smoke_config(), ROOT).name == SMOKE
    assert "smoke" in scale_of(smoke_config(), ROOT).describe()


def test_a_value_of_another_key_keeps_the_scale():
    """The published run adds --config authors_data=...: still the paper scale."""
    config = {**copy.deepcopy(SHIPPED), "authors_data": "../shared/data/cbo_rl_original"}
    assert scale_of(config, ROOT).name == PAPER


def test_a_size_neither_profile_gives_is_custom_and_named():
    config = smoke_config()
    config["trajectories"]["short"] = 12345
    scale = scale_of(config, ROOT)
    assert scale.name == CUSTOM
    assert any(d.startswith(f"trajectories.short 12345 (paper: {SHIPPED['trajectories']['short']!r}")
               for d in scale.differences)
    assert "trajectories.short 12345" in scale.describe()


def test_the_seed_lists_are_the_seed_blocks_not_the_scales():
    """The confirmatory block resolves every seed list to fresh seeds: still the paper scale."""
    config = copy.deepcopy(SHIPPED)
    config["seeds"] = [10000, 10001]
    assert scale_of(config, ROOT).name == PAPER


def test_the_declared_scale_is_checked_against_its_own_sizes():
    """The paper's sizes under the smoke profile's name are neither: custom, with the sizes named."""
    config = {**copy.deepcopy(SHIPPED), "scale": SMOKE}
    scale = scale_of(config, ROOT)
    assert scale.name == CUSTOM and any(d.startswith("trajectories.short") for d in scale.differences)


def test_a_missing_sizes_file_is_one_error_naming_it(tmp_path):
    (tmp_path / "config.yaml").write_text((ROOT / "config.yaml").read_text())
    with pytest.raises(ConfigError, match="scale.yaml"):
        scale_of(copy.deepcopy(SHIPPED), tmp_path)
