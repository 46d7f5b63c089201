"""Hostile and broken inputs of the offline study: crafted, corrupt or foreign checkpoints (no code
runs, the run starts afresh bit for bit), environment states, damaged or cut buffers, a run folder copied over another in the summary."""

import io
import shutil

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch

from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import provenance, provenance_path
from rlstudy.offline.bcq import BCQ
from rlstudy.offline.buffer import ReplayBuffer
from rlstudy.offline.checkpoint import env_state, restore_env_state, save_checkpoint
from rlstudy.offline.double_dqn import DQN
from rlstudy.offline.envs import AtariPreprocessing, make_env
from rlstudy.offline.training import generate_buffer, train_offline, train_online

from hostile import CPU, Payload, RUN, cli, marker, one_line_error, payload_tensor
from shipped_params import shipped

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def cartpole_buffer():
    env, info = RUN.make_env()
    buffer, _ = generate_buffer(DQN(info, RUN.params, CPU), env, info, 400, 1, np.random.default_rng(0),
                                0.2, 0.2, 0.0, "test")
    return buffer, info



def parameter_sums(learner, final=True):
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

    def evaluate(learner, final=True):
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

    atari = shipped(AtariPreprocessing, "offline", "atari_preprocessing", max_episode_steps=40)
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
    pong, _ = make_env("PongNoFrameskip-v4", shipped(AtariPreprocessing, "offline", "atari_preprocessing"))
    pong.reset(seed=0)
    cartpole, _ = make_env("CartPole-v1", shipped(AtariPreprocessing, "offline", "atari_preprocessing"))
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


# ---------------------------------------------------------------- the summary: each run is the run its records name

def write_offline_run(folder, env, seed):
    """performance.csv and each learner's evaluations.csv, with records as the offline steps write them."""
    names = {"env": {"env_id": env}, "run_seed": seed}
    save_csv(folder / "buffer" / "performance.csv",
             pd.DataFrame({"source": ["buffer", "behavioural"], "mean_return": [50.0, 60.0]}), {"parameters": names})
    for learner in ("behavioural", "bcq", "dqn"):
        algorithm = {} if learner == "behavioural" else {"algorithm": learner}
        save_csv(folder / learner / "evaluations.csv",
                 pd.DataFrame({"iteration": [100, 200], "mean_return": [40.0, 70.0], "std_return": [1.0, 2.0],
                              "episodes": [10, 10]}),
                 {"parameters": {**names, **algorithm}})


def test_the_offline_summary_refuses_a_run_copied_over_another_seed(tmp_path, cli):
    from rlstudy.offline.cli.summarise_offline import run_rows
    for seed in (0, 1):
        write_offline_run(tmp_path / "CartPole-v1" / f"seed{seed}", "CartPole-v1", seed)
    assert [row["learner"] for row in run_rows(tmp_path / "CartPole-v1" / "seed0")] == ["behavioural", "bcq", "dqn"]
    shutil.rmtree(tmp_path / "CartPole-v1" / "seed0")
    shutil.copytree(tmp_path / "CartPole-v1" / "seed1", tmp_path / "CartPole-v1" / "seed0")
    out = tmp_path / "summary.csv"
    status, err = cli("offline.cli.summarise_offline", "--runs", *(tmp_path / "CartPole-v1" / f"seed{s}" for s in (0, 1)),
                      "--out", out)
    one_line_error(status, err, "seed0/buffer/performance.csv", "parameters.run_seed 1, but it is read as 0")
    assert not out.exists()


def test_the_offline_summary_refuses_a_learner_of_another_algorithm_or_environment(tmp_path):
    from rlstudy.offline.cli.summarise_offline import run_rows
    folder = tmp_path / "CartPole-v1" / "seed0"
    write_offline_run(folder, "CartPole-v1", 0)
    shutil.copy(folder / "dqn" / "evaluations.csv", folder / "bcq" / "evaluations.csv")
    shutil.copy(provenance_path(folder / "dqn" / "evaluations.csv"), provenance_path(folder / "bcq" / "evaluations.csv"))
    with pytest.raises(InputError, match=r"bcq/evaluations\.csv .*parameters\.algorithm 'dqn', but it is read as 'bcq'"):
        run_rows(folder)
    other = tmp_path / "Acrobot-v1" / "seed0"
    shutil.copytree(tmp_path / "CartPole-v1", tmp_path / "Acrobot-v1", dirs_exist_ok=True)
    with pytest.raises(InputError, match="parameters.env.env_id 'CartPole-v1', but it is read as 'Acrobot-v1'"):
        run_rows(other)
