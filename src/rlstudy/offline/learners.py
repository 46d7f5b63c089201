"""The offline learners, registered once: what learns from the fixed buffer (stage 3 of the chain).

Every step that names the learners (the rules, train_offline, plot_offline, summarise_offline)
reads them from here. Adding one is a module with its `Learner` subclass and one line in LEARNERS
(with its own options, if any, in the config's `offline` section, named by `config_options`).
The behavioural DQN, trained online in stage 1, is not an offline learner, but its evaluations and
diagnostics sit beside theirs: `DIAGNOSED` lists it first, then every offline learner.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rlstudy.core.errors import InputError

if TYPE_CHECKING:  # the workflow reads the names at parse time: torch is imported only to build a learner
    import torch

    from .double_dqn import Learner, LearnerParams
    from .envs import EnvInfo

BEHAVIOURAL = "behavioural"  # the online stage's folder name: results/offline/{env}/seed{seed}/behavioural


@dataclass(frozen=True)
class OfflineLearner:
    """One learner of the fixed buffer.

    name: its folder and the `{algorithm}` wildcard (results/offline/{env}/seed{seed}/<name>);
    label: its name in figures; module, cls: its `Learner` subclass, rlstudy.offline.<module>.<cls>
    (named, not imported: the workflow reads the registry at parse time without torch, and lists the
    module's sources as the inputs of the learner's training jobs); config_options: option -> key
    of the config's `offline` section (e.g. BCQ's threshold), passed to the class as keyword
    arguments and recorded in the provenance of its outputs.
    """

    name: str
    label: str
    module: str
    cls: str
    config_options: Mapping[str, str] = field(default_factory=dict)

    def build(self, info: EnvInfo, params: LearnerParams, options: Mapping[str, object],
              device: torch.device) -> Learner:
        """An untrained learner: cls(info, params, device=device, **options)."""
        learner = getattr(importlib.import_module(f"rlstudy.offline.{self.module}"), self.cls)
        return learner(info, params, device=device, **options)

    def options(self, offline_config: Mapping[str, object]) -> dict[str, object]:
        """The learner's options from the config's `offline` section."""
        return {option: offline_config[key] for option, key in self.config_options.items()}

    def check_options(self, options: Mapping[str, object]) -> None:
        """Refuse options that are not exactly the learner's, naming their config keys."""
        if not isinstance(options, Mapping) or set(options) != set(self.config_options):
            raise InputError(f"offline learner {self.name!r} takes the options {sorted(self.config_options)} "
                             f"(config 'offline': {sorted(self.config_options.values())}), got {options!r}")


LEARNERS: dict[str, OfflineLearner] = {learner.name: learner for learner in (
    OfflineLearner("bcq", "BCQ", "bcq", "BCQ", {"threshold": "bcq_threshold"}),
    OfflineLearner("dqn", "offline DQN", "double_dqn", "DQN"),
)}

DIAGNOSED: dict[str, tuple[str, str]] = {
    BEHAVIOURAL: ("behavioural DQN", "environment steps"),
    **{name: (learner.label, "updates") for name, learner in LEARNERS.items()},
}
"""Every learner of a run folder (the behavioural DQN first): its label and the unit of its x axis."""
