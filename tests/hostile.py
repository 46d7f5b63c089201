"""What the hostile-input tests of every study share (tests/unit/*/test_hostile_*.py): a pickled
payload that would create a marker file, the fixture that asserts it never appears, a step run in
this process, and the one-line error every refusal must be."""

import importlib
import os
import pickle
import signal
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from rlstudy.core.cli import run
from rlstudy.offline.double_dqn import LearnerParams
from rlstudy.offline.envs import AtariPreprocessing
from rlstudy.offline.runs import Run
from shipped_params import shipped

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
SHARED = ROOT.parent / "shared" / "data" / "cbo_rl_original"
CPU = torch.device("cpu")


needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"the shared copy {SHARED} is not here")
RUN = Run("CartPole-v1", 0, 7, shipped(LearnerParams, "offline", "regular", batch_size=16, start_steps=50, eval_every=100), shipped(AtariPreprocessing, "offline", "atari_preprocessing"), 10, 3)


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


def run_step(capsys, monkeypatch, module: str, *args) -> tuple[int, str, str]:
    """A step's main() in this process as `python -m rlstudy.<module> args` would run it: (status, stdout, stderr)."""
    main = importlib.import_module(f"rlstudy.{module}").main
    monkeypatch.setattr(sys, "argv", [module, *map(str, args)])
    capsys.readouterr()
    try:
        run(main)
        status = 0
    except SystemExit as stop:
        status = stop.code
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run a step's main() in this process as `python -m rlstudy.<module> args` would: (status, stderr)."""
    def call(module: str, *args) -> tuple[int, str]:
        status, _, err = run_step(capsys, monkeypatch, module, *args)
        return status, err
    return call


class Hung(Exception):
    """Not an OSError, so that no handler of the code under test turns it into a refusal."""


@contextmanager
def deadline(seconds: int = 10):
    """A blocked open() or an endless read raises Hung after `seconds` (SIGALRM) instead of hanging the suite."""
    def expire(signum, frame):
        raise Hung(f"still blocked after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def nothing_written(folder: Path) -> bool:
    return not folder.exists() or not any(folder.iterdir())


def one_line_error(status: int, stderr: str, *fragments: str) -> None:
    """Exit status 2 and a last word of one line, `error: ...`, holding each fragment."""
    error = stderr[stderr.find("error: "):].strip()
    assert status == 2 and error.startswith("error: ") and "\n" not in error and "Traceback" not in stderr, stderr
    for fragment in fragments:
        assert fragment in error, (fragment, error)
