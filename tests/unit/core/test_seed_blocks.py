"""The two seed blocks (issue 42): every replicate list of the config, the confirmatory block resolved into
the lists the rules read, and the check that no confirmatory seed is an exploratory or a tuning one."""

import copy
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from rlstudy.bellman.config_checks import CHECKS, sweep_seed_problems
from rlstudy.core.config import ConfigError, validate_config
from rlstudy.core.seed_blocks import (DERIVED_FLOOR, MAX_COUNT, TUNING_LISTS, TUNING_OFFSET, derived_start,
                                      resolve_seed_block, seed_block_problems, seed_lists)

ROOT = Path(__file__).resolve().parents[3]
PAPER = yaml.safe_load((ROOT / "config.yaml").read_text())
# The rule from an integer start (protocol 1's: 10000), as a development config may still write it.
CONFIG = {**PAPER, "confirmatory_block": {**PAPER["confirmatory_block"], "start": 10000}}
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
LOCK = ROOT / "protocol.lock"


def test_every_replicate_list_of_the_config_is_found_and_has_a_confirmatory_count():
    lists = seed_lists(CONFIG)
    assert {"seeds.evaluation", "seeds.control", "cbo.settings.cbo.seeds", "cbo.settings.cbo-adaptive.seeds",
            "cbo_sweep.seeds", "mpo.seeds", "qtable.seeds", "linear_q.seeds", "dqn.seeds", "ddpg.seeds",
            "offline.seeds"} == set(lists)
    assert set(CONFIG["confirmatory_block"]["counts"]) == set(lists)
    assert CONFIG["seed_block"] == "confirmatory"  # make figures runs the confirmatory block ...
    assert PAPER["confirmatory_block"]["start"] == "protocol"  # ... whose seeds the committed lock holds
    smoke = yaml.safe_load((ROOT / "workflow" / "profiles" / "smoke" / "scale.yaml").read_text())
    assert smoke["seed_block"] == "exploratory"  # development runs the exploratory one


def test_the_confirmatory_block_is_resolved_into_the_lists_the_rules_read():
    resolved = resolve_seed_block(CONFIG)
    counts, start = CONFIG["confirmatory_block"]["counts"], CONFIG["confirmatory_block"]["start"]
    for key, seeds in seed_lists(resolved).items():
        first = start + (MAX_COUNT if key in TUNING_LISTS else 0)
        assert seeds == list(range(first, first + counts[key])), key
    assert resolved["seeds"]["control"][0] == start and resolved["mpo"]["seeds"][0] == start
    assert seed_lists(CONFIG)["seeds.control"][0] == 0  # the exploratory lists are left as written
    exploratory = {**CONFIG, "seed_block": "exploratory"}
    assert resolve_seed_block(exploratory) is exploratory
    # the study's confirmatory seeds never meet the sweep's, at every count the schema allows
    wide = copy.deepcopy(CONFIG)
    wide["confirmatory_block"]["counts"] = {key: MAX_COUNT for key in counts}
    schema = yaml.safe_load(SCHEMA.read_text())
    assert sweep_seed_problems(resolve_seed_block(wide), schema) == []
    counts_schema = schema["properties"]["confirmatory_block"]["properties"]["counts"]
    assert counts_schema["additionalProperties"]["maximum"] == MAX_COUNT


@pytest.mark.parametrize("key, seeds, kind", [("mpo.seeds", [10003], "exploratory"),
                                              ("cbo_sweep.seeds", [15001, 7], "tuning"),
                                              ("seeds.control", [0, 10039], "exploratory")])
def test_a_confirmatory_seed_that_is_also_exploratory_or_tuning_is_refused_naming_both_keys(key, seeds, kind):
    config = copy.deepcopy(CONFIG)
    section, _, last = key.rpartition(".")
    holder = config
    for part in section.split("."):
        holder = holder[part]
    holder[last] = seeds
    with pytest.raises(ConfigError) as refused:
        validate_config(config, SCHEMA, checks=CHECKS)
    confirmatory = {"mpo.seeds": "mpo.seeds", "cbo_sweep.seeds": "cbo_sweep.seeds", "seeds.control": "seeds.control"}
    assert f"config key 'confirmatory_block.counts.{confirmatory[key]}'" in str(refused.value)
    assert f"are also {kind} seeds (config key '{key}')" in str(refused.value)


def test_confirmatory_counts_must_name_every_list():
    config = copy.deepcopy(CONFIG)
    del config["confirmatory_block"]["counts"]["dqn.seeds"]
    config["confirmatory_block"]["counts"]["dqn.sedes"] = 2
    problems = seed_block_problems(config)
    assert any("no count for the replicate list 'dqn.seeds'" in p for p in problems)
    assert any("'dqn.sedes' is not a replicate list" in p for p in problems)
    with pytest.raises(ConfigError, match="dqn.seeds"):
        resolve_seed_block(config)
    assert seed_block_problems({**config, "seed_block": "exploratory"}) == []  # only the picked block needs them


def test_a_locked_start_takes_the_lock_s_lists_checked_against_the_counts(tmp_path):
    lock = tmp_path / "protocol.lock"
    counts = PAPER["confirmatory_block"]["counts"]
    plan = {key: list(range(2_000_000 + (5000 if key in TUNING_LISTS else 0), 2_000_000 + count
                            + (5000 if key in TUNING_LISTS else 0))) for key, count in counts.items()}
    lock.write_text(json.dumps({"protocol": 2, "seed_plan": plan}))
    resolved = resolve_seed_block(PAPER, lock)
    assert seed_lists(resolved) == plan
    with pytest.raises(ConfigError, match="no protocol lock was given"):
        resolve_seed_block(PAPER)
    with pytest.raises(ConfigError, match="no protocol lock"):
        resolve_seed_block(PAPER, tmp_path / "absent.lock")
    fewer = copy.deepcopy(PAPER)
    fewer["confirmatory_block"]["counts"]["mpo.seeds"] = 3
    held = counts["mpo.seeds"]
    with pytest.raises(ConfigError, match=f"'confirmatory_block.counts.mpo.seeds': 3, but the protocol lock's list holds "
                       f"{held}"):
        resolve_seed_block(fewer, lock)
    lock.write_text(json.dumps({"protocol": 2, "seed_plan": {**plan, "mpo.seeds": ["$(rm -rf /)"]}}))
    with pytest.raises(ConfigError, match="not a mapping of list keys to seeds"):
        resolve_seed_block(PAPER, lock)
    lock.write_text(json.dumps({"protocol": 2, "seed_plan": {**plan, "mpo.seeds": list(range(held))}}))
    with pytest.raises(ConfigError, match="are also exploratory seeds .*write a new protocol"):
        resolve_seed_block(PAPER, lock)


def test_the_derived_start_stays_in_its_range_and_clear_of_protocol_1s_block():
    for text in ("", "a", "b" * 64, "f" * 64):
        start = derived_start(hashlib.sha256(text.encode()).hexdigest())
        assert DERIVED_FLOOR <= start and start + 2 * TUNING_OFFSET < 2**31
    assert derived_start("f" * 64) != derived_start("e" * 64)


def test_a_fifo_in_the_locks_place_is_refused_not_waited_on(tmp_path):
    """The lock is read as a regular file of bounded size (core/regular_files.py): a FIFO is one line."""
    import os

    from hostile import deadline
    from rlstudy.core.seed_blocks import locked_plan

    lock = tmp_path / "protocol.lock"
    os.mkfifo(lock)

    with deadline(10), pytest.raises(ConfigError, match="not a protocol lock .*a FIFO, not a regular file"):
        locked_plan(lock)
