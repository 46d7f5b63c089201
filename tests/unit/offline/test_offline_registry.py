"""The offline learners' registry: each learner's options come from the config, wrong options are
refused with the config keys' names, and build makes the registered class."""

import pytest
import torch

from rlstudy.core.errors import InputError
from rlstudy.offline.bcq import BCQ
from rlstudy.offline.double_dqn import DQN, LearnerParams
from rlstudy.offline.envs import EnvInfo
from rlstudy.offline.learners import BEHAVIOURAL, DIAGNOSED, LEARNERS
from shipped_params import shipped

CPU = torch.device("cpu")
INFO = EnvInfo("CartPole-v1", False, (4,), 1, 3, False)


def test_each_learner_builds_its_class_with_its_options_from_the_config():
    offline_config = {"bcq_threshold": 0.3, "low_noise_p": 0.2}
    bcq = LEARNERS["bcq"].build(INFO, shipped(LearnerParams, "offline", "regular"), LEARNERS["bcq"].options(offline_config), CPU)
    assert type(bcq) is BCQ and bcq.threshold == 0.3
    assert LEARNERS["dqn"].options(offline_config) == {}
    assert type(LEARNERS["dqn"].build(INFO, shipped(LearnerParams, "offline", "regular"), {}, CPU)) is DQN


def test_options_a_learner_does_not_take_or_misses_are_refused_naming_the_config_key():
    with pytest.raises(InputError, match="bcq_threshold"):
        LEARNERS["bcq"].check_options({})
    with pytest.raises(InputError, match="'dqn'"):
        LEARNERS["dqn"].check_options({"threshold": 0.3})
    with pytest.raises(InputError, match="bcq_threshold"):
        LEARNERS["bcq"].check_options(0.3)  # JSON that is not an object
    LEARNERS["bcq"].check_options({"threshold": 0.3})


@pytest.mark.parametrize("threshold", [1.0, -0.1, True, "0.3"])
def test_bcq_refuses_a_threshold_outside_zero_one(threshold):
    with pytest.raises(InputError, match="offline.bcq_threshold"):
        BCQ(INFO, shipped(LearnerParams, "offline", "regular"), threshold, CPU)


def test_the_behavioural_dqn_comes_first_then_every_registered_learner_in_order():
    assert list(DIAGNOSED) == [BEHAVIOURAL, *LEARNERS] == ["behavioural", "bcq", "dqn"]
    assert DIAGNOSED["bcq"] == ("BCQ", "updates")
