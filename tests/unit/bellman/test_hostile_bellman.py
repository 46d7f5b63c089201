"""Hostile and broken inputs of the CBO/BFF study: the authors' files, NaN weights, the reward
convention, cut or copied error curves, parameters by hand, an unwritable output folder."""

import dataclasses
import importlib
import json
import math
import pickle
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from rlstudy.bellman.data import authors_data
from rlstudy.bellman.results.error_curves import load_error_curves
from rlstudy.bellman.data.trajectories import check_rewards, save_trajectory
from rlstudy.bellman.problem.exact import solve_on_grid
from rlstudy.bellman.numerics.compiled.qnet import init_params, to_state_dict
from rlstudy.bellman.problem.sde import sample_trajectory
from rlstudy.bellman.learners.sgd import SGDParams
from rlstudy.bellman.learners.sweep import sweep_config_problems
from rlstudy.core.cli import build
from rlstudy.core.config import ConfigError, validate_config
from rlstudy.core.errors import InputError, OutputError
from rlstudy.core.atomic_writes import ensure_writable, save_csv, save_npy, save_tensors
from rlstudy.core.loaders import load_tensors
from rlstudy.core.provenance import provenance, provenance_path

from bellman_fixtures import dynamics
from hostile import Payload, ROOT, SCHEMA, SHARED, cli, marker, needs_shared, nothing_written, one_line_error

PROBLEM = json.dumps({"dynamics": dataclasses.asdict(dynamics()), "gamma": 0.9})  # a step's --problem

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_authors_loader_refuses_a_payload_in_a_legacy_files_header(tmp_path, marker):
    """torch reads a legacy file's magic number with the pickle module's own `load`; it must be
    the restricted one too (with the ordinary one this payload ran)."""
    path = tmp_path / "Q_ctrl_star.pt"
    path.write_bytes(pickle.dumps(Payload(marker), protocol=2) + b"the rest of a legacy file")
    with pytest.raises(InputError, match=r"Q_ctrl_star\.pt: refused to load posix\.system"):
        authors_data.reference_from_pickled_module(path, check_hash=False)



def test_the_authors_loader_refuses_a_payload_in_a_zip_files_body(tmp_path, marker):
    path = tmp_path / "Q_ctrl_star.pt"
    torch.save(Payload(marker), path)
    with pytest.raises(InputError, match=r"refused to load posix\.system"):
        authors_data.reference_from_pickled_module(path, check_hash=False)



def test_the_authors_trajectory_files_are_checked_then_read_without_pickle(tmp_path, marker, monkeypatch):
    for part in ("S", "A_idx", "R"):
        torch.save(Payload(marker), tmp_path / f"{part}_2.pt")
    with pytest.raises(InputError, match=r"S_2\.pt: sha256 .* does not match the published"):
        authors_data.trajectory_from_originals(tmp_path, "control")
    monkeypatch.setattr(authors_data, "verify", lambda path, name=None: None)  # as if the hash were skipped
    with pytest.raises(InputError, match=r"S_2\.pt: not a tensor file"):
        authors_data.trajectory_from_originals(tmp_path, "control")



def test_the_authors_numpy_copy_refuses_object_arrays(tmp_path, marker, monkeypatch):
    path = tmp_path / authors_data.NPZ_OF_TASK["control"]
    np.savez(path, states=np.array([Payload(marker)], dtype=object), action_indices=np.zeros(3),
             rewards=np.zeros(3))
    with pytest.raises(InputError, match="does not match the published"):
        authors_data.trajectory_from_npz(path)
    monkeypatch.setattr(authors_data, "verify", lambda path, name=None: None)
    with pytest.raises(InputError, match="corrupt input file"):
        authors_data.trajectory_from_npz(path)



@pytest.fixture(scope="module")
def bellman_project(tmp_path_factory):
    """A tiny trajectory, a Q*, and two SGD runs of one setting (seeds 0 and 1), made by the steps."""
    root = tmp_path_factory.mktemp("bellman")
    shipped = dynamics()
    save_trajectory(root / "traj", sample_trajectory("uniform", 400, shipped, np.random.default_rng(0)),
                    provenance({}, None, {}))
    save_tensors(root / "q_star.pt", to_state_dict(init_params(1, torch.Generator().manual_seed(0))[0]),
                 provenance({}, None, {}))
    save_npy(root / "q_exact.npy", solve_on_grid(200, None, 0.9, shipped).values, provenance({}, None, {}))
    argv = sys.argv
    for seed in (0, 1):
        sys.argv = ["run_method", "--dataset", "ours", "--optimizer", "sgd", "--setting", "sgd", "--task", "control",
                    "--estimator", "DS",
                    "--run-seed", str(seed), "--seed", "3", "--device", "cpu", "--trajectory", str(root / "traj"),
                    "--reference", str(root / "q_star.pt"), "--exact", str(root / "q_exact.npy"),
                    "--params", json.dumps(SGD_PARAMS),
                    "--problem", problem_json(), "--numerics", "compiled", "--out-dir", str(root / f"seed{seed}")]
        importlib.import_module("rlstudy.bellman.cli.run_method").main()
    sys.argv = argv
    return root



SGD_PARAMS = {"epochs": 2, "batch_size": 100, "lr0": 0.1, "lr_decay": 0.9, "ur_action": "recorded"}


def problem_json(**changes):
    """config 'problem' as run_method reads it (--problem), its dynamics with `changes`."""
    return json.dumps({"dynamics": dataclasses.asdict(dynamics(**changes)), "gamma": 0.9})



@pytest.fixture
def project(bellman_project, tmp_path):
    return Path(shutil.copytree(bellman_project, tmp_path / "project"))



def run_method_args(project, **change):
    args = {"--dataset": "ours", "--optimizer": "sgd", "--setting": "sgd", "--task": "control", "--estimator": "DS",
            "--run-seed": 0, "--device": "cpu",
            "--seed": 3, "--trajectory": project / "traj", "--reference": project / "q_star.pt",
            "--exact": project / "q_exact.npy",
            "--params": json.dumps(SGD_PARAMS), "--problem": problem_json(), "--numerics": "compiled",
            "--out-dir": project / "new"}
    args.update(change)
    return [item for pair in args.items() for item in pair]



def test_a_nan_weight_in_a_run_network_fails_the_figure_by_name(project, cli):
    """It used to draw all-NaN curves, which the figure dropped without a word."""
    state = load_tensors(project / "seed1" / "q.pt", "test")
    state["fc2.weight"][3, 7] = math.nan
    save_tensors(project / "seed1" / "q.pt", state, provenance({}, None, {}))
    status, err = cli("bellman.cli.plot_q", "--task", "control", "--setting", "sgd", "--reference",
                      project / "q_star.pt", "--exact", project / "q_exact.npy", "--density", project / "density.npy",
                      "--runs", project / "seed0", project / "seed1",
                      "--problem", PROBLEM, "--converged-below", 0.5, "--formats", "png", "--dpi", 30,
                      "--out-prefix", project / "fig")
    one_line_error(status, err, "seed1/q.pt", "'fc2.weight' holds NaN or inf")
    assert not list(project.glob("fig*"))



def test_a_nan_weight_in_q_star_fails_a_run_before_it_trains(project, cli):
    state = load_tensors(project / "q_star.pt", "test")
    state["fc3.bias"][0] = math.inf
    save_tensors(project / "q_star.pt", state, provenance({}, None, {}))
    one_line_error(*cli("bellman.cli.run_method", *run_method_args(project)), "q_star.pt", "'fc3.bias'")
    assert nothing_written(project / "new")



def test_rewards_of_the_other_convention_are_refused_by_file_and_key(project, cli):
    next_rewards = problem_json(reward_of="next")
    one_line_error(*cli("bellman.cli.run_method", *run_method_args(project, **{"--problem": next_rewards})),
                   "traj/rewards.npy", "config 'problem.dynamics.reward_of: next'", "they are those of reward_of: current")



@needs_shared
def test_the_authors_rewards_are_those_of_the_current_state():
    traj = authors_data.trajectory_from_npz(SHARED / authors_data.NPZ_OF_TASK["evaluation"])
    check_rewards(traj, dynamics(reward_of="current"), "authors")
    with pytest.raises(InputError, match=r"authors: reward 0 .* they are those of reward_of: current"):
        check_rewards(traj, dynamics(reward_of="next"), "authors")



def cut_lines(path: Path, keep: int) -> None:
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:keep]))



def test_summarise_refuses_a_truncated_curve(project, cli):
    curves = [project / f"seed{seed}" / "errors.csv" for seed in (0, 1)]
    args = ["--curves", *curves, "--exact", '{"rows": []}', "--problem", PROBLEM, "--converged-below", 0.5,
            "--out", project / "summary.csv", "--stats-out", project / "summary_stats.csv"]
    cut_lines(curves[1], 4)  # its provenance record names it
    one_line_error(*cli("bellman.cli.summarise", *args), "seed1/errors.csv", "changed or truncated")
    provenance_path(curves[1]).unlink()  # no record: the other seed's length names it
    one_line_error(*cli("bellman.cli.summarise", *args), "seed1/errors.csv", "2 iterations, but", "seed0")
    curves[1].write_text(curves[1].read_text()[:-12])  # cut inside a line
    one_line_error(*cli("bellman.cli.summarise", *args), "seed1/errors.csv")
    assert not (project / "summary.csv").exists()



def test_a_copied_run_is_not_a_second_seed(project):
    shutil.copytree(project / "seed0", project / "seed2")
    with pytest.raises(InputError, match=r"seed2/errors.csv and .*seed0/errors.csv hold the same run"):
        load_error_curves([project / f"seed{seed}" / "errors.csv" for seed in (0, 1, 2)])



def test_a_curve_with_missing_or_shuffled_iterations_is_refused(tmp_path):
    curve = pd.DataFrame({"dataset": "ours", "task": "control", "setting": "sgd", "estimator": "DS", "seed": 0,
                          "iteration": [0, 2, 1], "evaluations": [0, 1, 2], "error": 1.0, "rel_error": 1.0,
                          "error_exact": 1.0, "rel_error_exact": 1.0})
    save_csv(tmp_path / "errors.csv", curve, None)
    with pytest.raises(InputError, match=r"iterations are not 0, 1, \.\.\., 2 in order"):
        load_error_curves([tmp_path / "errors.csv"])



def good_trajectory_arrays(n=50):
    states = np.cumsum(np.full(n, 0.1))
    return {"states": states, "action_indices": np.zeros(n, dtype=np.int8), "rewards": np.sin(states) + 1.0}



@pytest.mark.parametrize("damage, message", [
    (lambda a: a.update(rewards=a["rewards"][:-1]), r"expected shape \(50,\) like the states.*\(rewards\)"),
    (lambda a: a["rewards"].__setitem__(3, np.nan), "rewards contain NaN"),
    (lambda a: a["states"].__setitem__(0, np.inf), "states contain NaN"),
    (lambda a: a["action_indices"].__setitem__(1, 2), "action indices must be 0 or 1"),
])
def test_the_authors_numpy_copy_is_checked_as_any_trajectory(tmp_path, monkeypatch, damage, message):
    """Pinned by sha256 like the originals; and what it holds is checked beyond the hash."""
    arrays = good_trajectory_arrays()
    damage(arrays)
    path = tmp_path / authors_data.NPZ_OF_TASK["control"]
    np.savez(path, **arrays)
    with pytest.raises(InputError, match=r"control_trajectory_1e6\.npz: sha256 .* does not match the published"):
        authors_data.trajectory_from_npz(path)
    monkeypatch.setitem(authors_data.SHA256, path.name, authors_data.sha256_file(path))
    with pytest.raises(InputError, match=rf"control_trajectory_1e6\.npz: {message}"):
        authors_data.trajectory_from_npz(path)



def test_the_authors_numpy_reference_with_a_nan_bias_is_refused(tmp_path, monkeypatch):
    state = to_state_dict(init_params(1, torch.Generator().manual_seed(0))[0])
    state["fc1.bias"][0] = math.nan
    path = tmp_path / authors_data.NPZ_REFERENCE
    np.savez(path, **{k: v.numpy() for k, v in state.items()})
    with pytest.raises(InputError, match="does not match the published"):
        authors_data.reference_from_npz(path)
    monkeypatch.setitem(authors_data.SHA256, path.name, authors_data.sha256_file(path))
    with pytest.raises(InputError, match=r"control_reference_q\.npz: 'fc1\.bias' holds NaN"):
        authors_data.reference_from_npz(path)



def test_the_shipped_numpy_copy_passes_its_pins():
    if not SHARED.is_dir():
        pytest.skip(f"the shared copy {SHARED} is not here")
    for name in (*authors_data.NPZ_OF_TASK.values(), authors_data.NPZ_REFERENCE):
        authors_data.verify(SHARED / name)



@pytest.mark.parametrize("lr0, shown", [(math.nan, "nan is not a finite number"), (math.inf, "inf is not a finite"),
                                        (1e300, "greater than the maximum of 1"), (-0.1, "less than or equal to")])
def test_a_learning_rate_must_be_a_finite_step(lr0, shown):
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["sgd"]["control"]["lr0"] = lr0
    with pytest.raises(ConfigError, match=rf"config key 'sgd.control.lr0': .*{shown}"):
        validate_config(config, SCHEMA, checks=[sweep_config_problems])
    with pytest.raises(InputError, match=rf"config 'sgd': key 'lr0': .*{shown}"):
        build(SGDParams, {**SGD_PARAMS, "lr0": lr0}, "config 'sgd'")



@pytest.mark.parametrize("params, message", [
    ({**SGD_PARAMS, "epochs": -1}, "key 'epochs': -1 is less than the minimum of 1"),
    ({**SGD_PARAMS, "lr0": "NaN"}, "key 'lr0': 'NaN' is not of type 'number'"),
])
def test_a_step_run_by_hand_checks_its_parameters_as_the_config_is_checked(project, cli, params, message):
    """Negative epochs by hand used to write a 0-iteration result with exit 0."""
    status, err = cli("bellman.cli.run_method", *run_method_args(project, **{"--params": json.dumps(params)}))
    one_line_error(status, err, "config 'sgd'", message)
    assert nothing_written(project / "new")



def test_json_nan_by_hand_is_refused(project, cli):
    text = json.dumps(SGD_PARAMS).replace('"lr0": 0.1', '"lr0": NaN')
    one_line_error(*cli("bellman.cli.run_method", *run_method_args(project, **{"--params": text})),
                   "config 'sgd': key 'lr0': nan is not a finite number")



def test_an_output_folder_that_cannot_be_written_fails_before_training(project, cli, monkeypatch):
    (project / "a_file").write_text("not a folder")
    sgd = importlib.import_module("rlstudy.bellman.learners.sgd")

    def never(*_, **__):
        raise AssertionError("trained before checking the output folder")
    monkeypatch.setattr(sgd, "train_sgd", never)
    status, err = cli("bellman.cli.run_method", *run_method_args(project, **{"--out-dir": project / "a_file" / "run"}))
    one_line_error(status, err, "cannot write in", "a_file/run")
    with pytest.raises(OutputError, match="cannot write in .*a_file"):
        ensure_writable(project / "a_file" / "deeper")


# ---------------------------------------------------------------- steps run by hand: one-line errors, nothing half-written

def test_summarise_checks_both_outputs_before_writing_either(project, cli):
    """--stats-out into an unwritable place used to fail after --out was written."""
    (project / "a_file").write_text("not a folder")
    curves = [project / f"seed{seed}" / "errors.csv" for seed in (0, 1)]
    for stats_out in (project / "a_file" / "stats.csv", project / "seed0"):
        status, err = cli("bellman.cli.summarise", "--curves", *curves, "--exact", '{"rows": []}', "--problem", PROBLEM,
                          "--converged-below", 0.5,
                          "--out", project / "summary.csv", "--stats-out", stats_out)
        one_line_error(status, err, "cannot write")
        assert not (project / "summary.csv").exists()


@needs_shared
@pytest.mark.parametrize("steps, message", [
    (5_000_000, "--steps 5000000 (config 'trajectories.authors'): the authors' evaluation trajectory has 1,000,000 steps"),
    (1, "--steps 1 (config 'trajectories.authors'): at least 3 steps"),
])
def test_import_authors_data_refuses_steps_beyond_the_data_or_too_few(tmp_path, cli, steps, message):
    out = tmp_path / "traj"
    one_line_error(*cli("bellman.cli.import_authors_data", "--task", "evaluation", "--source", SHARED,
                        "--steps", steps, "--trajectory-out", out), message)
    assert nothing_written(out)


@pytest.mark.parametrize("entries, message", [
    ('{"rows": 3}', 'expected {"rows": [...]} with at least one row'),
    ('{}', 'expected {"rows": [...]} with at least one row'),
    ('{"rows": [3]}', "each row needs exactly the keys"),
    ('{"rows": [{"dataset": "ours"}]}', "each row needs exactly the keys"),
    ('{"rows": [{"dataset": "ours", "task": "control", "reference": 1, "exact": "e", "dynamics": {}, "made_by": "m", "density": "d"}]}',
     "keys ['reference'] must be text"),
    ('{"rows": [{"dataset": "ours", "task": "control", "reference": "r", "exact": "e", "dynamics": 1, "made_by": "m", "density": "d"}]}',
     "keys ['dynamics'] must be text (dynamics: an object)"),
])
def test_summarise_qstar_checks_its_entries_given_by_hand(tmp_path, cli, entries, message):
    one_line_error(*cli("bellman.cli.summarise_qstar", "--entries", entries, "--problem", PROBLEM,
                        "--out", tmp_path / "t.csv"),
                   "--entries", message)
    assert not (tmp_path / "t.csv").exists()
