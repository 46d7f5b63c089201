import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from rlstudy.bellman.data.trajectories import load_trajectory, save_trajectory
from rlstudy.bellman.problem.sde import sample_trajectory
from rlstudy.bellman.config_checks import CHECKS
from rlstudy.core.config import ConfigError, validate_config
from rlstudy.core.errors import InputError, OutputError
from rlstudy.core.atomic_writes import save_npy, save_tensors, write_artefact
from rlstudy.core.loaders import load_tensors
from rlstudy.core.provenance import provenance, PROVENANCE_SUFFIX
from bellman_fixtures import dynamics

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def shipped_config():
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def test_tensor_files_do_not_depend_on_their_name(tmp_path):
    """torch.save to a path names its archive folder after the file: we save through a buffer."""
    tensors = {"w": torch.arange(6.0).view(2, 3)}
    save_tensors(tmp_path / "a.pt", tensors, None)
    save_tensors(tmp_path / "other_name.pt", tensors, None)
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "other_name.pt").read_bytes()
    torch.testing.assert_close(load_tensors(tmp_path / "a.pt", "test")["w"], tensors["w"])


def test_provenance_is_beside_the_artefact_and_has_no_timestamp(tmp_path):
    source = tmp_path / "input.npy"
    np.save(source, np.arange(3))
    record = provenance({"lr": 0.1}, 7, {"data": source})
    save_npy(tmp_path / "out.npy", np.ones(4), record)
    saved = json.loads((tmp_path / ("out.npy" + PROVENANCE_SUFFIX)).read_text())
    assert saved["parameters"] == {"lr": 0.1} and saved["seed"] == 7
    assert len(saved["inputs"]["data"]["sha256"]) == 64 and len(saved["artefact"]["sha256"]) == 64
    assert {"torch", "numpy", "python"} <= set(saved["packages"]) and "git_commit" in saved
    # (not the command: it holds this process's arguments, and `pytest tests/unit/runtime/...` names "runtime")
    assert "time" not in json.dumps({k: v for k, v in saved.items() if k != "command"}).lower()
    save_npy(tmp_path / "out2.npy", np.ones(4), provenance({"lr": 0.1}, 7, {"data": source}))
    assert (tmp_path / "out2.npy").read_bytes() == (tmp_path / "out.npy").read_bytes()


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    target = tmp_path / "x.bin"
    target.write_bytes(b"old")

    def fail(*_):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", fail)
    with pytest.raises(OutputError, match=r"cannot write .*x\.bin: disk full"):
        write_artefact(target, b"new", None)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.bin"]


def test_trajectory_round_trip_and_clear_errors(tmp_path):
    traj = sample_trajectory("uniform", 50, dynamics(), np.random.default_rng(0))
    save_trajectory(tmp_path, traj, None)
    loaded = load_trajectory(tmp_path)
    np.testing.assert_array_equal(loaded.states, traj.states)
    (tmp_path / "rewards.npy").write_bytes(b"not a numpy file")
    with pytest.raises(InputError, match="corrupt input file .*rewards.npy"):
        load_trajectory(tmp_path)
    (tmp_path / "rewards.npy").unlink()
    with pytest.raises(InputError, match="missing input file .*rewards.npy"):
        load_trajectory(tmp_path)
    np.save(tmp_path / "rewards.npy", np.ones(49))
    with pytest.raises(InputError, match="rewards.npy: expected shape"):
        load_trajectory(tmp_path)


def test_shipped_config_and_smoke_overrides_are_valid():
    validate_config(shipped_config(), SCHEMA, checks=CHECKS)


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["problem"]["dynamics"].update(reward_of="future"),
     re.escape("'problem.dynamics.reward_of': 'future' is not allowed; allowed values: ['current', 'next']")),
    (lambda c: c["problem"].update(gamma=1.0), "'problem.gamma': 1.0 is greater than or equal to the maximum of 1"),
    (lambda c: c["sgd"]["control"].update(momentum=0.9), "'sgd.control'.*'momentum' was unexpected.*allowed keys"),
    (lambda c: c["cbo"]["settings"]["cbo"]["params"].update(beta=-1), "'cbo.settings.cbo.params.beta'"),
    (lambda c: c["cbo"]["settings"]["cbo"].update(estimators=["BFF-matching"]),
     re.escape("'cbo.settings.cbo.estimators': 'BFF-matching' is not a registered estimator")),
    (lambda c: c["reference"].update(estimator="TD"),
     re.escape("'reference.estimator': 'TD' is not a registered estimator")),
    (lambda c: c["cbo_sweep"].update(estimator="TD"),
     re.escape("'cbo_sweep.estimator': 'TD' is not a registered estimator")),
    # gamma has one home, config `problem`: a section that names its own is refused.
    (lambda c: c["sgd"]["control"].update(gamma=0.95), "'sgd.control'.*'gamma' was unexpected"),
    (lambda c: c["cbo_sweep"].update(setting="cbo-fast"), re.escape("'cbo_sweep.setting': 'cbo-fast' is not a CBO setting")),
    (lambda c: c["cbo_sweep"]["overrides"].update(gamma=0.5), "'cbo_sweep.overrides'.*'gamma'"),
    (lambda c: c.update(tasks=["planning"]), "'tasks.0': 'planning' is not allowed"),
    (lambda c: c.pop("seed"), "'seed' is a required property"),
    (lambda c: c["cbo_sweep"]["grids"]["plain_beta_noise"].update(noise=[0.1, -1.0]),
     re.escape("'cbo_sweep.grids.plain_beta_noise.noise': -1.0 is less than the minimum of 0")),
    (lambda c: c["cbo_sweep"]["grids"].update(bad={"beta": [1.0]}), "'cbo_sweep.grids.bad'.*should be non-empty|"
     "'cbo_sweep.grids.bad'.*fewer than 2 properties|'cbo_sweep.grids.bad'.*does not have enough properties"),
    (lambda c: c["cbo_sweep"]["grids"].update(bad={"beta": [1.0], "sigma": [1.0]}),
     "'cbo_sweep.grids.bad'.*'sigma'"),
    (lambda c: c["cbo_sweep"]["grids"].update(bad={"beta": [1.0], "with": {"noise": 0.0}}),
     "'cbo_sweep.grids.bad': give exactly two parameters"),
    (lambda c: c.update(authors_data=""), "'authors_data'"),
])
def test_bad_config_names_the_key(mutate, message):
    config = shipped_config()
    mutate(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA, checks=CHECKS)


def rename(section: dict, old: str, new: str) -> None:
    """Give `section` its key `new` back under its old name `old` (as a config written before issue 20)."""
    section[old] = section.pop(new)


# Issue 20 renamed these keys (one meaning per name); no old name is read any more: a config that
# still uses one is refused, naming the old key where it stands.
@pytest.mark.parametrize("mutate, message", [
    (lambda c: rename(c["sgd"], "methods", "estimators"), "'sgd': .*'methods' was unexpected"),
    (lambda c: rename(c["cbo"]["settings"]["cbo"], "methods", "estimators"),
     "'cbo.settings.cbo': .*'methods' was unexpected"),
    (lambda c: rename(c["reference"], "method", "estimator"), "'reference': .*'method' was unexpected"),
    (lambda c: rename(c["cbo_sweep"], "method", "estimator"), "'cbo_sweep': .*'method' was unexpected"),
    (lambda c: rename(c["problem"]["dynamics"], "eps", "dt"), "'problem.dynamics': .*'eps' was unexpected"),
    (lambda c: rename(c["cbo"]["settings"]["cbo-adaptive"]["params"], "tau", "noise"),
     "'cbo.settings.cbo-adaptive.params': .*'tau' was unexpected"),
    (lambda c: rename(c["cbo_sweep"]["grids"]["plain_beta_noise"], "tau", "noise"),
     "'cbo_sweep.grids.plain_beta_noise': 'tau' is not allowed; allowed values: \\[.*'noise'"),
    (lambda c: rename(c["ddpg"]["params"], "tau", "polyak"), "'ddpg.params': .*'tau' was unexpected"),
    (lambda c: (rename(c["offline"]["regular"], "tau", "polyak"),
                rename(c["offline"]["regular"], "polyak", "polyak_target_update")),
     "'offline.regular': .*'tau' was unexpected"),
])
def test_an_old_key_is_refused_by_its_name(mutate, message):
    config = shipped_config()
    mutate(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA, checks=CHECKS)


def test_cli_reports_a_missing_input_without_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "rlstudy.bellman.cli.run_method", "--dataset", "ours", "--optimizer", "sgd",
         "--setting", "sgd", "--task", "control", "--estimator", "DS", "--run-seed", "0", "--seed", "1", "--device", "cpu",
         "--numerics", "compiled",
         "--trajectory", str(tmp_path / "none"), "--reference", str(tmp_path / "q.pt"),
         "--exact", str(tmp_path / "q_exact.npy"), "--out-dir", str(tmp_path),
         "--params", '{"epochs": 1, "batch_size": 10, "lr0": 0.1, "lr_decay": 1.0, "ur_action": "recorded"}',
         "--problem", '{"dynamics": {"dt": 0.1, "sigma": 0.2, "reward_of": "current"}, "gamma": 0.9}'],
        capture_output=True, text=True)
    assert result.returncode == 2
    assert "missing input file" in result.stderr and "states.npy" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_reports_unknown_parameters(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "rlstudy.bellman.cli.make_trajectory", "--task", "control", "--size", "short",
         "--steps", "10", "--dynamics", '{"dt": 0.1, "sigmaa": 1}', "--seed", "0", "--out-dir", str(tmp_path)],
        capture_output=True, text=True)
    assert result.returncode == 2
    assert "config 'problem.dynamics': unknown keys ['sigmaa']" in result.stderr
    assert not any(tmp_path.iterdir())
