import hashlib

import numpy as np
import pandas as pd
import pytest

from rlstudy.agents.rollout import save_gif
from rlstudy.plotting.curves import evaluation_label, mean_and_band, on_common_steps, running_mean


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


def test_runs_with_different_episode_ends_share_one_step_axis():
    # seed a's episodes end at steps 10, 30, 60; seed b's at 20, 50, 70: the common span is 20..60,
    # and at each end of either seed every run shows its last finished episode's value.
    a = pd.DataFrame({"step": [10, 30, 60], "r": [1.0, 2.0, 3.0]})
    b = pd.DataFrame({"step": [20, 50, 70], "r": [5.0, 6.0, 7.0]})
    on_a, on_b = on_common_steps([a, b], "r")
    assert on_a["step"].tolist() == on_b["step"].tolist() == [20, 30, 50, 60]
    assert on_a["r"].tolist() == [1.0, 2.0, 2.0, 3.0]
    assert on_b["r"].tolist() == [5.0, 5.0, 6.0, 6.0]
    assert mean_and_band([on_a, on_b], "step", "r")["mean"].tolist() == [3.0, 3.5, 4.0, 4.5]


def test_a_run_below_its_bar_is_labelled_failing():
    assert evaluation_label("seed0", 149.44, 475) == "seed0 149.4 FAILS (< 475)"
    assert evaluation_label("seed1", 475.0, 475) == "seed1 475.0"
    assert evaluation_label("seed1", -140.56, -200) == "seed1 -140.6"


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
