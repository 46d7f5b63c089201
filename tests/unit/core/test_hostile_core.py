"""Hostile and broken inputs met by the shared core: loaders that run no code from a file, records
that name a changed file, config values by hand and on the command line, a full or unwritable disk."""

import dataclasses
import errno
import os
import re

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from snakemake.cli import parse_config
from snakemake.utils import update_config

from rlstudy.bellman.sde import Dynamics
from rlstudy.bellman.sgd import SGDParams
from rlstudy.bellman.sweep import sweep_config_problems
from rlstudy.core.config import ConfigError, command_line_values, validate_config
from rlstudy.core.errors import InputError, OutputError
from rlstudy.core.io import (
    load_csv,
    load_npy,
    load_tensors,
    provenance,
    provenance_path,
    save_csv,
    save_npy,
    save_tensors,
    write_artefact,
)
from rlstudy.offline.double_dqn import LearnerParams
from rlstudy.offline.envs import AtariPreprocessing


from hostile import Payload, ROOT, SCHEMA, cli, marker

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
    from rlstudy.agents.mpo import MPOParams
    from rlstudy.agents.registry import AGENTS
    from rlstudy.bellman.cbo import CBOParams
    classes = [Dynamics, SGDParams, CBOParams, LearnerParams, AtariPreprocessing, MPOParams,
               *{AGENTS[name].params for name in ("qtable", "linear_q", "dqn", "ddpg")}]
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
    with pytest.raises(ConfigError, match=re.escape("config key 'seeds': 0 is not of type 'array'; on the command "
                                                    "line give a list in brackets, e.g. --config 'seeds=[0,1]'")):
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
