import hashlib

import numpy as np
import pandas as pd
import pytest

from rlstudy.plotting.curves import mean_and_band, running_mean
from rlstudy.rollout import save_gif


def test_mean_and_band_keeps_only_steps_every_seed_reached():
    a = pd.DataFrame({"step": [1, 2, 3], "r": [1.0, 2.0, 3.0]})
    b = pd.DataFrame({"step": [1, 2], "r": [3.0, 6.0]})
    stats = mean_and_band([a, b], "step", "r")
    assert stats["step"].tolist() == [1, 2]
    assert stats["mean"].tolist() == [2.0, 4.0]
    assert stats["low"].tolist() == [1.0, 2.0]
    assert stats["high"].tolist() == [3.0, 6.0]


def test_mean_and_band_refuses_no_runs():
    with pytest.raises(ValueError):
        mean_and_band([], "step", "r")


def test_running_mean_by_hand():
    assert running_mean([1, 2, 3, 4], 2).tolist() == [1.0, 1.5, 2.5, 3.5]
    assert running_mean([4, 2], 10).tolist() == [4.0, 3.0]


def test_gif_is_byte_identical_on_rewrite(tmp_path):
    frames = [np.full((6, 8, 3), 30 * i, dtype=np.uint8) for i in range(5)]
    path = tmp_path / "r.gif"
    save_gif(path, frames, fps=10)
    first = hashlib.sha256(path.read_bytes()).hexdigest()
    save_gif(path, frames, fps=10)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == first
    assert path.read_bytes()[:6] == b"GIF89a"
