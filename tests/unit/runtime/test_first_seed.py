"""The first seed of a replicate list in the block a run uses (rlstudy.runtime.first_seed, make first-seed), and a
seed list the run sets where the confirmatory block would replace it refused (core/seed_blocks.replaced_lists)."""

import pytest

from rlstudy.core.config import ConfigError, load_yaml
from rlstudy.core.scale import SMOKE_SIZES
from rlstudy.core.run_config import merged_files, own_config
from rlstudy.core.seed_blocks import confirmatory_plan, locked_plan, replaced_lists
from rlstudy.runtime.first_seed import first_seed

from project_copy import ROOT

PAPER = load_yaml(ROOT / "config.yaml", "config file")
SMOKE = merged_files([ROOT / "config.yaml", ROOT / SMOKE_SIZES])


def test_the_first_seed_is_the_picked_blocks(monkeypatch):
    monkeypatch.chdir(ROOT)  # the checkout's protocol.lock holds the confirmatory lists (start: protocol)
    plan = confirmatory_plan(PAPER, locked_plan(ROOT / "protocol.lock"))
    assert first_seed(PAPER) == plan["seeds.control"][0]
    assert first_seed(PAPER, "cbo_sweep.seeds") == plan["cbo_sweep.seeds"][0]
    assert first_seed({**PAPER, "seed_block": "exploratory"}) == PAPER["seeds"]["control"][0]
    # the smoke sizes give one `seeds:` list for both tasks
    assert first_seed(SMOKE, "seeds.control") == SMOKE["seeds"][0]


def test_an_unknown_list_is_named():
    with pytest.raises(ConfigError, match="no replicate list 'dqn.seed'"):
        first_seed(PAPER, "dqn.seed")


def test_a_list_the_confirmatory_block_would_replace_is_refused_saying_how():
    given = {**PAPER, "cbo": {**PAPER["cbo"], "settings": {**PAPER["cbo"]["settings"], "cbo": {
        **PAPER["cbo"]["settings"]["cbo"], "seeds": [0, 1, 2]}}}}
    [problem] = replaced_lists(given, PAPER)
    assert problem.startswith("config key 'cbo.settings.cbo.seeds': seeds [0, 1, 2] given")
    assert "--config seed_block=exploratory" in problem
    assert replaced_lists({**given, "seed_block": "exploratory"}, PAPER) == []
    assert replaced_lists(PAPER, PAPER) == []  # the checkout's own lists are the block's to replace


def test_only_the_checkouts_own_files_count_as_written(tmp_path):
    (tmp_path / "config.yaml").write_text("seeds: [0, 1]\n")
    (tmp_path / "more.yaml").write_text("seeds: [5]\n")
    assert own_config(["config.yaml", "more.yaml"], tmp_path) == {"seeds": [0, 1]}
