"""MPO's hyper-parameters (config section `mpo`, its schema `mpo_params`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rlstudy.core.errors import InputError


@dataclass(frozen=True)
class MPOParams:
    """Hyper-parameters, from config 'mpo' (their one home): those of the seed's MPOAgent keep its
    values; the rest (networks, replay, budget) the seed leaves to its caller."""
    SCHEMA: ClassVar[str] = "mpo_params"  # its definition in workflow/schemas/config.schema.yaml

    # run and replay
    total_steps: int  # environment steps of training
    learning_starts: int  # uniform random actions (and no updates) before this step
    buffer_size: int  # replay capacity (transitions)
    batch_size: int  # transitions (or sequences, with Retrace) per update
    updates_per_step: int  # gradient updates per environment step after learning_starts
    policy_layer_sizes: tuple[int, ...]
    critic_layer_sizes: tuple[int, ...]
    eval_episodes: int  # greedy episodes after training
    log_every: int  # environment steps between diagnostics rows
    # the seed's MPOAgent
    gamma: float
    target_update_period: int  # updates between hard copies into the target networks
    policy_lr: float
    q_lr: float
    kl_epsilon: float  # E-step bound on KL(q || pi_target) (the temperature's constraint)
    mstep_kl_epsilon: float  # M-step bound on each of KL_mean and KL_std (per action dimension)
    temperature_init: float  # unconstrained eta before softplus
    temperature_lr: float
    lambda_lr: float  # learning rate of alpha_mean and alpha_std
    init_log_alpha_mean: float  # unconstrained alpha_mean before softplus
    init_log_alpha_stddev: float  # unconstrained alpha_std: a stiff start for the std
    max_grad_norm: float
    action_samples: int  # N actions per state in the E-step and the critic target
    use_retrace: bool
    retrace_steps: int  # sequence length T of a Retrace target
    retrace_mc_actions: int  # actions averaged for V(s') in Retrace
    retrace_lambda: float  # trace cut c_t = lambda * min(1, pi/b)
    optimizer: str  # adam (eps 1e-5) or sgd (with sgd_momentum)
    sgd_momentum: float
    m_steps: int  # policy gradient steps per update (lr divided by it)

    def __post_init__(self):
        object.__setattr__(self, "policy_layer_sizes", tuple(self.policy_layer_sizes))
        object.__setattr__(self, "critic_layer_sizes", tuple(self.critic_layer_sizes))
        if self.optimizer not in ("adam", "sgd"):
            raise InputError(f"MPO optimizer must be 'adam' or 'sgd', got {self.optimizer!r}")
