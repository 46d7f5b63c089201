"""Hostile and broken inputs: no file the pipeline reads makes it run code, no wrong number passes.

Each test builds the bad input a reviewer might meet (a crafted pickle, a NaN weight, a cut file, a
read-only folder, a hand-typed negative epoch count) and checks the pipeline's answer: a one-line
error naming the file or config key with exit status 2 and nothing half-written, or, for a
checkpoint, a warning and a fresh start. A crafted pickle's payload would create a marker file;
it must never appear.
"""

import dataclasses
import errno
import importlib
import io
import json
import math
import os
import pickle
import re
import shutil
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from snakemake.cli import parse_config
from snakemake.utils import update_config

from rlstudy.bellman import authors_data
from rlstudy.bellman.curves import load_error_curves
from rlstudy.bellman.datasets import check_rewards, save_trajectory
from rlstudy.bellman.exact import solve_on_grid
from rlstudy.bellman.qnet import init_params, to_state_dict
from rlstudy.bellman.sde import Dynamics, sample_trajectory
from rlstudy.bellman.sgd import SGDParams
from rlstudy.bellman.sweep import sweep_config_problems
from rlstudy.core.cli import build, run
from rlstudy.core.config import ConfigError, command_line_values, validate_config
from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.errors import InputError, OutputError
from rlstudy.core.io import (
    ensure_writable,
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
from rlstudy.offline.bcq import BCQ
from rlstudy.offline.buffer import ReplayBuffer
from rlstudy.offline.checkpoint import env_state, restore_env_state, save_checkpoint
from rlstudy.offline.double_dqn import DQN, LearnerParams
from rlstudy.offline.envs import AtariPreprocessing, make_env
from rlstudy.offline.runs import Run
from rlstudy.offline.training import generate_buffer, train_offline, train_online

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
SHARED = ROOT.parent / "shared" / "data" / "cbo_rl_original"
CPU = torch.device("cpu")
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"the shared copy {SHARED} is not here")
RUN = Run("CartPole-v1", 0, 7, LearnerParams(batch_size=16, start_steps=50, eval_every=100), AtariPreprocessing())

pytestmark = pytest.mark.usefixtures("one_thread")


# ---------------------------------------------------------------- helpers

class Payload:
    """Unpickling this runs a shell command that creates `marker`."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch '{self.marker}'",)


@pytest.fixture
def marker(tmp_path):
    path = tmp_path / "code-ran"
    yield path
    assert not path.exists(), "a payload in a data file ran"


def payload_tensor(marker: Path) -> torch.Tensor:
    """A payload pickled into a uint8 tensor, as the old checkpoints stored random and env states."""
    return torch.frombuffer(bytearray(pickle.dumps(Payload(marker))), dtype=torch.uint8)


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run a step's main() in this process as `python -m rlstudy.<module> args` would: (status, stderr)."""
    def call(module: str, *args) -> tuple[int, str]:
        main = importlib.import_module(f"rlstudy.{module}").main
        monkeypatch.setattr(sys, "argv", [module, *map(str, args)])
        capsys.readouterr()
        try:
            run(main)
            status = 0
        except SystemExit as stop:
            status = stop.code
        return status, capsys.readouterr().err
    return call


def nothing_written(folder: Path) -> bool:
    return not folder.exists() or not any(folder.iterdir())


def one_line_error(status: int, stderr: str, *fragments: str) -> None:
    """Exit status 2 and a last word of one line, `error: ...`, holding each fragment."""
    error = stderr[stderr.find("error: "):].strip()
    assert status == 2 and error.startswith("error: ") and "\n" not in error and "Traceback" not in stderr, stderr
    for fragment in fragments:
        assert fragment in error, (fragment, error)


# ---------------------------------------------------------------- no code runs from a data file

def test_core_loaders_refuse_pickles(tmp_path, marker):
    np.save(tmp_path / "evil.npy", np.array([Payload(marker)], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match=r"corrupt input file .*evil\.npy"):
        load_npy(tmp_path / "evil.npy", "test")
    torch.save({"w": Payload(marker)}, tmp_path / "evil.pt")
    with pytest.raises(InputError, match=r"corrupt input file .*evil\.pt"):
        load_tensors(tmp_path / "evil.pt", "test")


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


# ---------------------------------------------------------------- checkpoints

@pytest.fixture(scope="module")
def cartpole_buffer():
    env, info = RUN.make_env()
    buffer, _ = generate_buffer(DQN(info, RUN.params, CPU), env, info, 400, 1, np.random.default_rng(0),
                                0.2, 0.2, 0.0, "test")
    return buffer, info


def parameter_sums(learner):
    """A cheap stand-in for an evaluation: it sees every weight of the learner."""
    return np.array([float(p.detach().sum()) for p in learner.network.parameters()])


def offline_run(buffer, info, checkpoint, evaluate=parameter_sums):
    RUN.seed_torch("bcq")
    learner = BCQ(info, RUN.params, 0.3, CPU)
    log = DiagnosticsLog()
    curve = train_offline(learner, buffer, 250, RUN.rng("bcq"), evaluate, checkpoint, "fp", "test", log)
    return curve, [p.detach().clone() for p in learner.network.parameters()], log.frame()


def same_run(a, b) -> bool:
    return a[0].equals(b[0]) and all(torch.equal(x, y) for x, y in zip(a[1], b[1])) and a[2].equals(b[2])


class Stop(Exception):
    pass


def stopping_at_second_evaluation():
    """An evaluation that stops a run at its second call, after the run's first checkpoint."""
    calls = []

    def evaluate(learner):
        calls.append(1)
        if len(calls) == 2:
            raise Stop
        return parameter_sums(learner)
    return evaluate


def offline_checkpoint(buffer, info, path) -> dict:
    """A genuine checkpoint of offline_run after its first evaluation, as the loop wrote it."""
    with pytest.raises(Stop):
        offline_run(buffer, info, path, stopping_at_second_evaluation())
    return torch.load(path, weights_only=True)


def test_a_crafted_checkpoint_runs_no_code_and_the_run_starts_afresh(tmp_path, marker, cartpole_buffer, capsys):
    """The old loader unpickled the numpy generator's state from a tensor of the checkpoint."""
    buffer, info = cartpole_buffer
    fresh = offline_run(buffer, info, tmp_path / "none.pt")
    path = tmp_path / "checkpoint.pt"
    saved = offline_checkpoint(buffer, info, path)
    saved["random"]["numpy"] = payload_tensor(marker)
    save_checkpoint(path, saved.pop("fingerprint"), saved)
    capsys.readouterr()
    assert same_run(offline_run(buffer, info, path), fresh)
    assert f"warning: ignoring {path}" in capsys.readouterr().err


def test_a_checkpoint_holding_a_pickled_object_is_not_unpickled(tmp_path, marker, cartpole_buffer, capsys):
    buffer, info = cartpole_buffer
    fresh = offline_run(buffer, info, tmp_path / "none.pt")
    path = tmp_path / "checkpoint.pt"
    torch.save({"fingerprint": "fp", "iteration": 100, "learner": Payload(marker)}, path)
    capsys.readouterr()
    assert same_run(offline_run(buffer, info, path), fresh)
    assert f"warning: ignoring {path}: not a readable checkpoint" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["cut", "noise", "other layout", "diagnostics ahead", "diagnostics not numbers"])
def test_a_corrupt_or_foreign_checkpoint_is_ignored_and_the_run_matches_a_fresh_one(
        tmp_path, cartpole_buffer, capsys, damage):
    """Whatever a refused checkpoint changed before it was refused (the learner, the random
    states) is put back: the run is bit for bit a fresh one."""
    buffer, info = cartpole_buffer
    fresh = offline_run(buffer, info, tmp_path / "none.pt")
    path = tmp_path / "checkpoint.pt"
    saved = offline_checkpoint(buffer, info, path)
    if damage == "cut":
        path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2])
    elif damage == "noise":
        path.write_bytes(np.random.default_rng(0).bytes(5000))
    elif damage == "other layout":  # the same fingerprint, a random state that does not fit, restored after the learner
        saved["random"]["torch"] = torch.zeros(3, dtype=torch.uint8)
        save_checkpoint(path, saved.pop("fingerprint"), saved)
    else:  # diagnostics rows that no loop of this run wrote
        assert saved["diagnostics"]  # the genuine checkpoint keeps its rows so far
        saved["diagnostics"] = ([{"iteration": 10 ** 6, "loss_q": 1.0}] if damage == "diagnostics ahead"
                                else [{"iteration": 100, "loss_q": "1.0"}])
        save_checkpoint(path, saved.pop("fingerprint"), saved)
    capsys.readouterr()
    assert same_run(offline_run(buffer, info, path), fresh)
    assert f"warning: ignoring {path}" in capsys.readouterr().err


def online_run(checkpoint, evaluate=parameter_sums):
    env, info = RUN.make_env()
    RUN.seed_torch("behavioural")
    learner = DQN(info, RUN.params, CPU)
    log = DiagnosticsLog()
    curve = train_online(learner, env, info, 300, RUN.stream("env"), RUN.rng("behavioural"), evaluate,
                         checkpoint, "fp", "test", log)
    return curve, [p.detach().clone() for p in learner.network.parameters()], log.frame()


def test_an_online_checkpoint_with_a_pickled_environment_runs_no_code(tmp_path, marker, capsys):
    """The old checkpoints pickled the environment whole; this run's format holds its values."""
    fresh = online_run(tmp_path / "none.pt")
    path = tmp_path / "checkpoint.pt"
    with pytest.raises(Stop):
        online_run(path, stopping_at_second_evaluation())
    saved = torch.load(path, weights_only=True)
    assert isinstance(saved["env"], dict) and saved["env"]["env"]["state"].dtype == torch.float64
    saved["env"] = payload_tensor(marker)
    save_checkpoint(path, saved.pop("fingerprint"), saved)
    capsys.readouterr()
    assert same_run(online_run(path), fresh)
    assert f"warning: ignoring {path}: it does not fit this run" in capsys.readouterr().err


@pytest.mark.parametrize("env_id", ["CartPole-v1", "PongNoFrameskip-v4"])
def test_an_environment_resumes_from_its_values_exactly(env_id):
    """env_state -> torch.save -> torch.load(weights_only) -> a fresh environment continues as the
    original does, through episode ends (Atari: the emulator's state and random generator)."""
    def steps(env, actions):
        seen = []
        for action in actions:
            observation, reward, terminated, truncated, _ = env.step(int(action))
            seen.append((np.array(observation).tobytes(), reward, terminated, truncated))
            if terminated or truncated:
                seen.append(np.array(env.reset()[0]).tobytes())
        return seen

    atari = AtariPreprocessing(max_episode_steps=40)
    env, info = make_env(env_id, atari)
    env.reset(seed=5)
    actions = np.random.default_rng(0).integers(info.num_actions, size=150)
    steps(env, actions[:37])
    buffer = io.BytesIO()
    torch.save(env_state(env), buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=True)
    expected = steps(env, actions[37:])
    other, _ = make_env(env_id, atari)
    other.reset(seed=123)
    restore_env_state(other, saved)
    assert steps(other, actions[37:]) == expected


def test_a_state_of_another_environment_is_refused():
    pong, _ = make_env("PongNoFrameskip-v4", AtariPreprocessing())
    pong.reset(seed=0)
    cartpole, _ = make_env("CartPole-v1", AtariPreprocessing())
    cartpole.reset(seed=0)
    with pytest.raises(ValueError, match="other wrappers"):
        restore_env_state(cartpole, env_state(pong))
    garbled = env_state(pong)
    garbled["env"]["ale"] = torch.from_numpy(np.random.default_rng(0).integers(0, 256, 500, dtype=np.uint8))
    with pytest.raises(Exception):  # the emulator refuses bytes that are not its state (SystemError)
        restore_env_state(pong, garbled)
    state = env_state(cartpole)
    state["env"]["state"] = torch.zeros(5, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"state: expected an array float64\[4\]"):
        restore_env_state(cartpole, state)


def test_an_environment_whose_state_is_not_plain_values_cannot_be_checkpointed():
    env = gym.wrappers.RecordEpisodeStatistics(gym.make("CartPole-v1"))
    env.reset(seed=0)
    with pytest.raises(InputError, match="cannot checkpoint an environment under RecordEpisodeStatistics"):
        env_state(env)


# ---------------------------------------------------------------- artefacts checked where read

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


@pytest.fixture(scope="module")
def bellman_project(tmp_path_factory):
    """A tiny trajectory, a Q*, and two SGD runs of one setting (seeds 0 and 1), made by the steps."""
    root = tmp_path_factory.mktemp("bellman")
    dynamics = Dynamics()
    save_trajectory(root / "traj", sample_trajectory("uniform", 400, dynamics, np.random.default_rng(0)),
                    provenance({}, None, {}))
    save_tensors(root / "q_star.pt", to_state_dict(init_params(1, torch.Generator().manual_seed(0))[0]),
                 provenance({}, None, {}))
    save_npy(root / "q_exact.npy", solve_on_grid(200, None, 0.9, dynamics).values, provenance({}, None, {}))
    argv = sys.argv
    for seed in (0, 1):
        sys.argv = ["run_method", "--dataset", "ours", "--optimizer", "sgd", "--task", "control", "--method", "DS",
                    "--run-seed", str(seed), "--seed", "3", "--trajectory", str(root / "traj"),
                    "--reference", str(root / "q_star.pt"), "--exact", str(root / "q_exact.npy"),
                    "--params", json.dumps(SGD_PARAMS),
                    "--dynamics", json.dumps(dataclasses.asdict(dynamics)), "--out-dir", str(root / f"seed{seed}")]
        importlib.import_module("rlstudy.bellman.cli.run_method").main()
    sys.argv = argv
    return root


SGD_PARAMS = {"epochs": 2, "batch_size": 100, "lr0": 0.1, "lr_decay": 0.9, "gamma": 0.9, "ur_action": "recorded"}


@pytest.fixture
def project(bellman_project, tmp_path):
    return Path(shutil.copytree(bellman_project, tmp_path / "project"))


def run_method_args(project, **change):
    args = {"--dataset": "ours", "--optimizer": "sgd", "--task": "control", "--method": "DS", "--run-seed": 0,
            "--seed": 3, "--trajectory": project / "traj", "--reference": project / "q_star.pt",
            "--exact": project / "q_exact.npy",
            "--params": json.dumps(SGD_PARAMS), "--dynamics": json.dumps(dataclasses.asdict(Dynamics())),
            "--out-dir": project / "new"}
    args.update(change)
    return [item for pair in args.items() for item in pair]


def test_a_nan_weight_in_a_run_network_fails_the_figure_by_name(project, cli):
    """It used to draw all-NaN curves, which the figure dropped without a word."""
    state = load_tensors(project / "seed1" / "q.pt", "test")
    state["fc2.weight"][3, 7] = math.nan
    save_tensors(project / "seed1" / "q.pt", state, provenance({}, None, {}))
    status, err = cli("bellman.cli.plot_q", "--task", "control", "--optimizer", "sgd", "--reference",
                      project / "q_star.pt", "--exact", project / "q_exact.npy", "--runs", project / "seed0", project / "seed1",
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
    next_rewards = json.dumps(dataclasses.asdict(Dynamics(reward_of="next")))
    one_line_error(*cli("bellman.cli.run_method", *run_method_args(project, **{"--dynamics": next_rewards})),
                   "traj/rewards.npy", "config 'dynamics.reward_of: next'", "they are those of reward_of: current")


@needs_shared
def test_the_authors_rewards_are_those_of_the_current_state():
    traj = authors_data.trajectory_from_npz(SHARED / authors_data.NPZ_OF_TASK["evaluation"])
    check_rewards(traj, Dynamics(reward_of="current"), "authors")
    with pytest.raises(InputError, match=r"authors: reward 0 .* they are those of reward_of: current"):
        check_rewards(traj, Dynamics(reward_of="next"), "authors")


def cut_lines(path: Path, keep: int) -> None:
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:keep]))


def test_summarise_refuses_a_truncated_curve(project, cli):
    curves = [project / f"seed{seed}" / "errors.csv" for seed in (0, 1)]
    args = ["--curves", *curves, "--converged-below", 0.5, "--out", project / "summary.csv",
            "--stats-out", project / "summary_stats.csv"]
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
    curve = pd.DataFrame({"dataset": "ours", "task": "control", "optimizer": "sgd", "method": "DS", "seed": 0,
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


@pytest.fixture
def buffer_arrays(cartpole_buffer):
    buffer, info = cartpole_buffer
    return {name: array.copy() for name, array in buffer.arrays().items()}, info


@pytest.mark.parametrize("damage, array, message", [
    (lambda a: a.update(action=a["action"][:-5]), "frame, step, action, reward, terminal",
     r"lengths differ: .*'action': \(395,\)"),
    (lambda a: a["action"].__setitem__(7, 2), "action", r"values 0\.\.2 outside \[0, 1\]"),
    (lambda a: a["frame"].__setitem__(-1, len(a["frames"]) - 1), "frame", "outside"),
    (lambda a: a["frame"].__setitem__(0, -1), "frame", "outside"),
    (lambda a: a["cursor"].__setitem__(0, 10_000), "cursor", "does not follow the last transition's step"),
    (lambda a: a["reward"].__setitem__(0, np.nan), "reward", "NaN or inf"),
    (lambda a: a.pop("terminal"), "terminal", "missing"),
])
def test_a_damaged_buffer_is_refused_by_array(buffer_arrays, damage, array, message):
    """A buffer whose action array is cut short used to train on the shorter buffer."""
    arrays, info = buffer_arrays
    ReplayBuffer.from_arrays(info, arrays, "buffer")  # undamaged: accepted
    damage(arrays)
    with pytest.raises(InputError, match=rf"buffer \({array}\): .*{message}"):
        ReplayBuffer.from_arrays(info, arrays, "buffer")


def test_a_saved_buffer_cut_short_is_named(tmp_path, cartpole_buffer):
    buffer, info = cartpole_buffer
    buffer.save(tmp_path, provenance({}, None, {}))
    action = np.load(tmp_path / "action.npy")
    np.save(tmp_path / "action.npy", action[:-5])
    with pytest.raises(InputError, match=r"action\.npy .* changed or truncated"):
        ReplayBuffer.load(tmp_path, info)
    provenance_path(tmp_path / "action.npy").unlink()
    with pytest.raises(InputError, match=r"lengths differ: .*'action': \(395,\)"):
        ReplayBuffer.load(tmp_path, info)


# ---------------------------------------------------------------- config values, by hand and on the command line

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


# ---------------------------------------------------------------- disk and permissions

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


def test_an_output_folder_that_cannot_be_written_fails_before_training(project, cli, monkeypatch):
    (project / "a_file").write_text("not a folder")
    run_method = importlib.import_module("rlstudy.bellman.cli.run_method")

    def never(*_, **__):
        raise AssertionError("trained before checking the output folder")
    monkeypatch.setattr(run_method, "train_sgd", never)
    status, err = cli("bellman.cli.run_method", *run_method_args(project, **{"--out-dir": project / "a_file" / "run"}))
    one_line_error(status, err, "cannot write in", "a_file/run")
    with pytest.raises(OutputError, match="cannot write in .*a_file"):
        ensure_writable(project / "a_file" / "deeper")


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_artefacts_get_the_users_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        write_artefact(tmp_path / "x.bin", b"x", provenance({}, None, {}))
    finally:
        os.umask(previous)
    for path in (tmp_path / "x.bin", provenance_path(tmp_path / "x.bin")):
        assert path.stat().st_mode & 0o777 == mode, path
