"""Hostile and broken inputs met by the shared core: loaders that run no code from a file, records
that name a changed file, config values by hand and on the command line, a full or unwritable disk."""

import dataclasses
import errno
import json
import os
import re
import time

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from snakemake.cli import parse_config
from snakemake.utils import update_config

from rlstudy.bellman.problem.sde import Dynamics
from rlstudy.bellman.learners.sgd import SGDParams
from rlstudy.bellman.learners.sweep import sweep_config_problems
from rlstudy.core.config import ConfigError, command_line_values, load_yaml, validate_config
from rlstudy.core.errors import InputError, OutputError
from rlstudy.core.atomic_writes import ensure_writable_paths, save_csv, save_npy, save_tensors, write_artefact
from rlstudy.core.loaders import load_csv, load_npy, load_tensors, refuse_repeated_runs
from rlstudy.core.provenance import check_recorded_run, provenance, provenance_path
from rlstudy.offline.double_dqn import LearnerParams
from rlstudy.offline.envs import AtariPreprocessing


from hostile import Payload, ROOT, SCHEMA, cli, deadline, marker

pytestmark = pytest.mark.usefixtures("one_thread")


def test_core_loaders_refuse_pickles(tmp_path, marker):
    np.save(tmp_path / "evil.npy", np.array([Payload(marker)], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match=r"corrupt input file .*evil\.npy"):
        load_npy(tmp_path / "evil.npy", "test")
    torch.save({"w": Payload(marker)}, tmp_path / "evil.pt")
    with pytest.raises(InputError, match=r"corrupt input file .*evil\.pt"):
        load_tensors(tmp_path / "evil.pt", "test")



def test_a_changed_or_truncated_artefact_is_named_by_its_provenance(tmp_path):
    record = provenance({}, None, {})
    save_npy(tmp_path / "a.npy", np.arange(10.0), record)
    save_csv(tmp_path / "b.csv", pd.DataFrame({"x": [1, 2, 3]}), record)
    save_tensors(tmp_path / "c.pt", {"w": torch.ones(3)}, record)
    for name, load in (("a.npy", load_npy), ("b.csv", load_csv), ("c.pt", load_tensors)):
        load(tmp_path / name, "test")  # unchanged: read
        data = (tmp_path / name).read_bytes()
        (tmp_path / name).write_bytes(data[:-3])
        with pytest.raises(InputError, match=rf"{name} \(test\) changed or truncated since it was written.*rerun"):
            load(tmp_path / name, "test")
    provenance_path(tmp_path / "a.npy").write_text("{not json")
    with pytest.raises(InputError, match=r"unreadable provenance record .*a\.npy\.provenance\.json"):
        load_npy(tmp_path / "a.npy", "test")



@pytest.mark.parametrize("module, args", [
    ("offline.cli.train_offline", ["--iterations", "-5"]),
    ("bellman.cli.make_trajectory", ["--steps", "-1"]),
    ("offline.cli.generate_buffer", ["--low-noise-p", "nan"]),
])
def test_counts_and_probabilities_on_the_command_line_are_checked(cli, module, args):
    status, err = cli(module, *args)
    assert status == 2 and args[0] in err and ("must be" in err or "finite" in err), err



def test_every_parameter_dataclass_names_the_schema_definition_of_its_section():
    schema = yaml.safe_load(SCHEMA.read_text())
    from rlstudy.agents.mpo.config import MPOParams
    from rlstudy.agents.registry import BASICS, build_agent
    from rlstudy.bellman.learners.cbo import CBOParams
    classes = [Dynamics, SGDParams, CBOParams, LearnerParams, AtariPreprocessing, MPOParams,
               *{build_agent(name).params for name in BASICS}]
    for cls in classes:
        assert set(schema["$defs"][cls.SCHEMA]["properties"]) == {f.name for f in dataclasses.fields(cls)}, cls



@pytest.mark.parametrize("given, seeds", [("seeds=[0,1]", [0, 1]), ("seeds=[3, 4, 5]", [3, 4, 5])])
def test_seeds_given_on_the_command_line_as_a_list_work(given, seeds):
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    command_line = parse_config([given])  # what `snakemake --config ...` hands the Snakefile: strings
    update_config(config, command_line)
    assert config["seeds"] == [str(s) for s in seeds]
    update_config(config, command_line_values(command_line))
    assert config["seeds"] == seeds
    validate_config(config, SCHEMA, checks=[sweep_config_problems])



def test_a_scalar_given_for_a_list_shows_the_working_form():
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    update_config(config, parse_config(["seeds=0"]))
    update_config(config, command_line_values(parse_config(["seeds=0"])))
    with pytest.raises(ConfigError, match=re.escape("config key 'seeds': 0 is not of type 'array' or 'object'; on the "
                                                    "command line give a list in brackets, e.g. --config 'seeds=[0,1]'")):
        validate_config(config, SCHEMA, checks=[sweep_config_problems])



def test_a_full_disk_is_one_error_naming_the_path_and_leaves_nothing_behind(tmp_path, monkeypatch):
    target = tmp_path / "x.csv"
    save_csv(target, pd.DataFrame({"x": [1]}), provenance({}, None, {}))
    old = target.read_bytes(), provenance_path(target).read_bytes()

    def full(*_):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr("os.replace", full)
    with pytest.raises(OutputError, match=r"cannot write .*x\.csv: No space left on device"):
        save_csv(target, pd.DataFrame({"x": [2]}), provenance({}, None, {}))
    assert (target.read_bytes(), provenance_path(target).read_bytes()) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv", "x.csv.provenance.json"]
    load_csv(target, "test")  # the old pair still agrees



def test_a_record_that_fails_after_its_artefact_leaves_no_stale_record(tmp_path, monkeypatch):
    """The artefact is written first; the old record, which describes the old bytes, goes."""
    target = tmp_path / "x.csv"
    save_csv(target, pd.DataFrame({"x": [1]}), provenance({}, None, {}))
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith(".provenance.json"):
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
        real_replace(src, dst)
    monkeypatch.setattr("os.replace", replace)
    with pytest.raises(OutputError, match=r"cannot write .*x\.csv\.provenance\.json"):
        save_csv(target, pd.DataFrame({"x": [2]}), provenance({}, None, {}))
    assert load_csv(target, "test")["x"].tolist() == [2] and not provenance_path(target).exists()



@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_artefacts_get_the_users_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        write_artefact(tmp_path / "x.bin", b"x", provenance({}, None, {}))
    finally:
        os.umask(previous)
    for path in (tmp_path / "x.bin", provenance_path(tmp_path / "x.bin")):
        assert path.stat().st_mode & 0o777 == mode, path


# ---------------------------------------------------------------- provenance records and YAML, read with limits

@pytest.mark.parametrize("sha256", [None, 12345, "not-a-hash"])
def test_a_record_whose_sha256_is_not_a_hash_is_one_error_naming_file_and_field(tmp_path, sha256):
    save_csv(tmp_path / "b.csv", pd.DataFrame({"x": [1]}), provenance({}, None, {}))
    record_path = provenance_path(tmp_path / "b.csv")
    record = yaml.safe_load(record_path.read_text())
    record["artefact"]["sha256"] = sha256
    record_path.write_text(json.dumps(record))
    with pytest.raises(InputError, match=r"b\.csv\.provenance\.json \(test\): field 'artefact\.sha256' is .*not a sha256"):
        load_csv(tmp_path / "b.csv", "test")


def test_a_huge_record_or_a_link_in_its_place_is_refused_without_reading_it(tmp_path):
    save_csv(tmp_path / "b.csv", pd.DataFrame({"x": [1]}), None)
    record = provenance_path(tmp_path / "b.csv")
    with open(record, "wb") as f:
        f.truncate(1 << 34)  # 16 GiB, sparse: read whole it would exhaust the memory
    with pytest.raises(InputError, match=r"b\.csv\.provenance\.json \(test\): .*over the 8,388,608 "):
        load_csv(tmp_path / "b.csv", "test")
    huge = tmp_path / "huge"
    record.rename(huge)
    record.symlink_to(huge)
    with pytest.raises(InputError, match=r"b\.csv\.provenance\.json \(test\): .*a link, not a regular file"):
        load_csv(tmp_path / "b.csv", "test")


def test_a_run_is_read_only_as_the_run_its_record_names(tmp_path):
    path = tmp_path / "seed0" / "returns.csv"
    save_csv(path, pd.DataFrame({"x": [1]}), {"parameters": {"agent": "dqn", "run_seed": 1}})
    check_recorded_run(path, "test", {"parameters.agent": "dqn"})
    with pytest.raises(InputError, match=r"seed0/returns\.csv \(test\): its provenance record gives "
                                         r"parameters\.run_seed 1, but it is read as 0; a copied"):
        check_recorded_run(path, "test", {"parameters.agent": "dqn", "parameters.run_seed": 0})
    with pytest.raises(InputError, match="gives parameters.env nothing"):
        check_recorded_run(path, "test", {"parameters.env": "CartPole-v1"})
    save_csv(path, pd.DataFrame({"x": [1]}), None)
    with pytest.raises(InputError, match="no provenance record beside it"):
        check_recorded_run(path, "test", {"parameters.agent": "dqn"})
    with pytest.raises(InputError, match="b and a hold the same run"):
        refuse_repeated_runs([("a", {"seed": 0}), ("c", {"seed": 1}), ("b", {"seed": 0})])


LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))


def test_a_billion_laughs_is_refused_at_once(tmp_path):
    """Nine lines of nested aliases are 9**9 strings to walk; the loader refuses aliases outright."""
    path = tmp_path / "laughs.yaml"
    path.write_text(LAUGHS)
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"laughs\.yaml, line 2: YAML aliases \(\*name\) are not allowed"):
        load_yaml(path, "config file")
    assert time.perf_counter() - start < 1.0


def test_yaml_is_read_with_a_size_limit_and_safe_types(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * (2 << 20))
    with pytest.raises(ConfigError, match=r"big\.yaml is larger than 1 MiB"):
        load_yaml(big, "config file")
    tagged = tmp_path / "tagged.yaml"
    tagged.write_text("a: !!python/object/apply:os.system ['touch x']\n")
    with pytest.raises(ConfigError, match=r"tagged\.yaml, line 1: not valid YAML"):
        load_yaml(tagged, "config file")
    assert load_yaml(ROOT / "config.yaml", "config file")["seed"] == yaml.safe_load((ROOT / "config.yaml").read_text())["seed"]


def test_a_second_output_that_cannot_be_written_fails_before_the_first_is_written(tmp_path):
    (tmp_path / "folder").mkdir()
    with pytest.raises(OutputError, match=r"cannot write .*folder: it is a folder"):
        ensure_writable_paths(tmp_path / "out.csv", tmp_path / "folder")


# ---------------------------------------------------------------- free-text config values: schema patterns

def config_problems(**change) -> list[str]:
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    for dotted, value in change.items():
        *parents, key = dotted.split("__")
        node = config
        for parent in parents:
            node = node[parent]
        node[key] = value
    try:
        validate_config(config, SCHEMA, checks=[sweep_config_problems])
    except ConfigError as err:
        return str(err).splitlines()[1:]
    return []


PAYLOADS = ["CartPole-v1$(touch MARKER)", "CartPole-v1`touch MARKER`", "CartPole-v1; touch MARKER",
            "CartPole-v1' x", 'CartPole-v1" x', "CartPole-v1\ntouch MARKER", "CartPole v1"]


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("key", ["qtable__env", "linear_q__env", "dqn__env", "ddpg__env", "mpo__env"])
def test_an_environment_id_holding_shell_syntax_is_refused_by_the_schema(key, payload):
    problems = config_problems(**{key: payload})
    assert len(problems) == 1 and f"config key '{key.replace('__', '.')}'" in problems[0] and "does not match" in problems[0]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_sweep_value_holding_shell_syntax_is_refused_by_the_schema(payload):
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    grid = next(iter(config["cbo_sweep"]["grids"]))
    problems = config_problems(**{f"cbo_sweep__grids__{grid}__output_bias_init": [payload]})
    assert problems and all(f"cbo_sweep.grids.{grid}" in p for p in problems)


def test_authors_data_may_be_any_path_but_one_with_control_characters():
    """A folder path may hold quotes, spaces, `$(...)` (the rules quote it); not a newline."""
    assert config_problems(authors_data="/data/a b/it's $(touch MARKER); `x` \"y\"") == []
    problems = config_problems(authors_data="/data/a\ntouch MARKER")
    assert len(problems) == 1 and "config key 'authors_data'" in problems[0]


def test_authors_steps_between_one_and_two_are_refused():
    assert config_problems(trajectories__authors=2) and not config_problems(trajectories__authors=3)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_names_of_settings_grids_and_environments_holding_shell_syntax_are_refused(payload):
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    setting = next(iter(config["cbo"]["settings"].values()))
    grid = next(iter(config["cbo_sweep"]["grids"].values()))
    budget = config["offline"]["budgets"]["regular"]
    for section, value in (("cbo__settings", {payload: setting}), ("cbo_sweep__grids", {payload: grid}),
                           ("offline__environments", [payload]), ("offline__budgets", {payload: budget,
                                                                                   **config["offline"]["budgets"]})):
        assert config_problems(**{section: value}), section


@pytest.mark.parametrize("odd", ["fifo", "link to /dev/zero"])
def test_a_provenance_record_that_is_a_fifo_or_endless_is_refused_at_once(tmp_path, odd):
    """A record is opened as a regular file of bounded size (core/regular_files.py): a FIFO or a link to
    /dev/zero in a record's place is one line naming it, never a hang."""
    from rlstudy.core.provenance import read_record

    artefact = tmp_path / "a.csv"
    artefact.write_text("x\n1\n")
    record = provenance_path(artefact)
    if odd == "fifo":
        os.mkfifo(record)
    else:
        record.symlink_to("/dev/zero")

    with deadline(10), pytest.raises(InputError,
                                      match=r"unreadable provenance record .*a\.csv\.provenance\.json.*not a regular file"):
        read_record(artefact, "test")
