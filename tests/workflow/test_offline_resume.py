"""A run stopped after a checkpoint and started again ends exactly as an uninterrupted one."""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.offline.bcq import BCQ
from rlstudy.offline.double_dqn import DQN, LearnerParams
from rlstudy.offline.envs import AtariPreprocessing
from rlstudy.offline.runs import Run, run_fingerprint
from shipped_params import shipped
from rlstudy.offline.training import generate_buffer, train_offline, train_online

CPU = torch.device("cpu")
RUN = Run("CartPole-v1", 0, 7, shipped(LearnerParams, "offline", "regular", batch_size=16, start_steps=50, eval_every=100), shipped(AtariPreprocessing, "offline", "atari_preprocessing"), 10, 3)
ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("one_thread")


class Stop(Exception):
    pass


def parameter_sums(learner, final=True):
    """A cheap stand-in for the episodes of an evaluation: it sees every weight of the learner."""
    return np.array([float(p.detach().sum()) for p in learner.network.parameters()])


def stopping_at(evaluation):
    """An evaluation that stops the run at its `evaluation`-th call (after earlier checkpoints)."""
    calls = []

    def evaluate(learner, final=True):
        calls.append(1)
        if len(calls) == evaluation:
            raise Stop
        return parameter_sums(learner)
    return evaluate


def online(checkpoint, evaluate=parameter_sums, fingerprint="a", log=None):
    env, info = RUN.make_env()
    RUN.seed_torch("behavioural")
    learner = DQN(info, RUN.params, CPU)
    curve = train_online(learner, env, info, 300, RUN.stream("env"), RUN.rng("behavioural"), evaluate,
                         checkpoint, fingerprint, "test", log)
    return curve, learner


def same_networks(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.network.state_dict().values(), b.network.state_dict().values()))


def test_online_training_resumes_from_its_checkpoint(tmp_path):
    expected_log, resumed_log = DiagnosticsLog(), DiagnosticsLog()
    expected, reference = online(tmp_path / "uninterrupted.pt", log=expected_log)
    checkpoint = tmp_path / "run.pt"
    with pytest.raises(Stop):
        online(checkpoint, stopping_at(3))
    assert torch.load(checkpoint, weights_only=True)["step"] == 200
    resumed, learner = online(checkpoint, log=resumed_log)
    assert resumed.equals(expected) and list(expected["iteration"]) == [100, 200, 300]
    assert same_networks(learner, reference)
    # the diagnostics too: a row per evaluation, the first two from the checkpoint
    assert resumed_log.frame().equals(expected_log.frame())
    assert expected_log.frame()["iteration"].tolist() == [100, 200, 300]


def test_a_checkpoint_of_other_parameters_is_ignored(tmp_path):
    checkpoint = tmp_path / "run.pt"
    with pytest.raises(Stop):
        online(checkpoint, stopping_at(2))
    with pytest.raises(Stop):  # starts afresh: reaches its first evaluation again
        online(checkpoint, stopping_at(1), fingerprint="other parameters")


def test_watching_with_tensorboard_keeps_the_checkpoint_resumable():
    args = argparse.Namespace(env="CartPole-v1", steps=400, tensorboard=None)
    assert run_fingerprint(argparse.Namespace(**{**vars(args), "tensorboard": "logs/tb"})) == run_fingerprint(args)
    assert run_fingerprint(argparse.Namespace(**{**vars(args), "steps": 500})) != run_fingerprint(args)


def offline(buffer, info, checkpoint, evaluate=parameter_sums, log=None):
    RUN.seed_torch("bcq")
    learner = BCQ(info, RUN.params, 0.3, CPU)
    return train_offline(learner, buffer, 250, RUN.rng("bcq"), evaluate, checkpoint, "a", "test", log), learner


def test_offline_training_resumes_from_its_checkpoint(tmp_path):
    env, info = RUN.make_env()
    buffer, episodes = generate_buffer(DQN(info, RUN.params, CPU), env, info, 500, 1, np.random.default_rng(0),
                                       0.2, 0.2, 0.0, "test")
    assert len(buffer) == 500 and episodes["return"].sum() <= 500
    expected_log, resumed_log = DiagnosticsLog(), DiagnosticsLog()
    expected, reference = offline(buffer, info, tmp_path / "uninterrupted.pt", log=expected_log)
    with pytest.raises(Stop):
        offline(buffer, info, tmp_path / "run.pt", stopping_at(2))
    resumed, learner = offline(buffer, info, tmp_path / "run.pt", log=resumed_log)
    assert resumed.equals(expected) and list(expected["iteration"]) == [100, 200, 250]
    assert same_networks(learner, reference)
    assert resumed_log.frame().equals(expected_log.frame()) and len(expected_log.frame()) == 3


@pytest.mark.integration
def test_killed_cli_run_resumes_and_writes_the_same_artefacts(tmp_path):
    """Kill -9 a BCQ run right after its first checkpoint; the rerun's files equal an uninterrupted run's."""
    params = dict(vars(RUN.params), eval_every=400)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}

    def command(cli, *args):
        return [sys.executable, "-m", f"rlstudy.offline.cli.{cli}", "--env", "CartPole-v1", "--run-seed", "0", "--seed", "7", "--device", "cpu",
                "--params", json.dumps(params), "--atari", json.dumps(vars(RUN.atari)),
                "--evaluation-episodes", str(RUN.evaluation_episodes),
                "--curve-episodes", str(RUN.curve_episodes), *args]

    subprocess.run(command("train_behavioural", "--steps", "400", "--out-dir", str(tmp_path / "behavioural")),
                   env=env, check=True, capture_output=True)
    subprocess.run(command("generate_buffer", "--policy", str(tmp_path / "behavioural" / "q.pt"), "--steps", "1000",
                           "--low-noise-p", "0.2", "--rand-action-p", "0.2", "--buffer-dir", str(tmp_path / "buffer"),
                           "--out-dir", str(tmp_path / "performance")), env=env, check=True, capture_output=True)

    def bcq(out):
        return command("train_offline", "--algorithm", "bcq", "--options", '{"threshold": 0.3}', "--iterations", "2000",
                       "--buffer-dir", str(tmp_path / "buffer"), "--out-dir", str(out))
    subprocess.run(bcq(tmp_path / "uninterrupted"), env=env, check=True, capture_output=True)
    process = subprocess.Popen(bcq(tmp_path / "killed"), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    checkpoint = tmp_path / "killed" / "checkpoint.pt"
    while not checkpoint.exists() and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert checkpoint.exists() and not (tmp_path / "killed" / "q.pt").exists()
    resumed = subprocess.run(bcq(tmp_path / "killed"), env=env, check=True, capture_output=True, text=True)
    assert "resuming from" in resumed.stdout
    for name in ("q.pt", "evaluations.csv", "diagnostics.csv"):
        assert (tmp_path / "killed" / name).read_bytes() == (tmp_path / "uninterrupted" / name).read_bytes()
    assert not checkpoint.exists()
