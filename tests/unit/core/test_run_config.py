"""The one road of the workflow's configuration (core/run_config.py): the Snakefile's one call settles the
merged config (the command line's values typed and merged, the schema and the studies' checks, the seed
block written into the lists, the scale kept) or stops with one line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlstudy.bellman.config_checks import CHECKS
from rlstudy.core.config import ConfigError, load_yaml
from rlstudy.core.run_config import settle_config
from rlstudy.core.seed_blocks import resolve_seed_block

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def settle(tmp_path, monkeypatch, command_line, words=None):
    monkeypatch.chdir(ROOT)
    config = load_yaml(ROOT / "config.yaml", "config file")
    settle_config(config, config_files=["config.yaml"], command_line=command_line, command_line_words=words,
                  added_files=[], schema=SCHEMA, checks=CHECKS, workdir=tmp_path)
    return config


def test_the_shipped_config_settles_with_the_command_line_s_values_typed_and_the_seed_block_resolved(tmp_path, monkeypatch):
    config = settle(tmp_path, monkeypatch, {"seed": 7, "tensorboard": "false"}, ["seed=7", "tensorboard=false"])
    shipped = load_yaml(ROOT / "config.yaml", "config file")
    assert config["seed"] == 7 and config["tensorboard"] is False
    expected = resolve_seed_block({**shipped, "seed": 7, "tensorboard": False}, ROOT / "protocol.lock")
    assert {key: config[key] for key in expected} == expected


@pytest.mark.parametrize("command_line, words, message", [
    ({"seeds": "0"}, ["seeds=0"], "seeds"),
    ({"numerics": "fast"}, ["numerics=fast"], "numerics"),
])
def test_a_bad_value_stops_with_its_key(tmp_path, monkeypatch, command_line, words, message):
    with pytest.raises(ConfigError, match=message):
        settle(tmp_path, monkeypatch, command_line, words)


def test_a_config_file_with_an_alias_is_refused_before_the_merge(tmp_path, monkeypatch):
    bomb = tmp_path / "more.yaml"
    bomb.write_text("a: &x [1, 2]\nb: *x\n")
    monkeypatch.chdir(ROOT)
    config = load_yaml(ROOT / "config.yaml", "config file")
    with pytest.raises(ConfigError, match="more.yaml"):
        settle_config(config, config_files=["config.yaml", bomb], command_line={}, command_line_words=[],
                      added_files=[bomb], schema=SCHEMA, checks=CHECKS, workdir=tmp_path)


def test_the_checkout_s_recorded_scale_is_kept(tmp_path, monkeypatch):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / ".scale").write_text("smoke\n")
    with pytest.raises(ConfigError, match="built at smoke scale"):
        settle(tmp_path, monkeypatch, {})
