"""MPO's hyper-parameters (config section `mpo`, its schema `mpo_params`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rlstudy.core.errors import InputError


@dataclass(frozen=True)
class MPOParams:
    """Hyper-parameters. Those of the seed's MPOAgent keep its defaults; the rest (networks,
    replay, budget), which the seed leaves to its caller, solve Pendulum-v1 (greedy return about
    -120 to -160 over two seeds) in 15,000 steps and about 7 CPU minutes per seed."""
    SCHEMA: ClassVar[str] = "mpo_params"  # its definition in workflow/schemas/config.schema.yaml

    # run and replay
    total_steps: int = 15_000            # environment steps of training
    learning_starts: int = 1_000         # uniform random actions (and no updates) before this step
    buffer_size: int = 1_000_000         # replay capacity (transitions)
    batch_size: int = 128                # transitions (or sequences, with Retrace) per update
    updates_per_step: int = 1            # gradient updates per environment step after learning_starts
    policy_layer_sizes: tuple[int, ...] = (128, 128)
    critic_layer_sizes: tuple[int, ...] = (128, 128)
    eval_episodes: int = 10              # greedy episodes after training
    log_every: int = 500                 # environment steps between diagnostics rows
    # the seed's MPOAgent
    gamma: float = 0.99
    target_update_period: int = 100      # updates between hard copies into the target networks
    policy_lr: float = 3e-4
    q_lr: float = 3e-4
    kl_epsilon: float = 0.1              # E-step bound on KL(q || pi_target) (the temperature's constraint)
    mstep_kl_epsilon: float = 0.1        # M-step bound on each of KL_mean and KL_std (per action dimension)
    temperature_init: float = 1.0        # unconstrained eta before softplus
    temperature_lr: float = 3e-4
    lambda_lr: float = 3e-4              # learning rate of alpha_mean and alpha_std
    init_log_alpha_mean: float = 10.0    # unconstrained alpha_mean before softplus
    init_log_alpha_stddev: float = 1000.0  # unconstrained alpha_std: a stiff start for the std
    max_grad_norm: float = 1.0
    action_samples: int = 20             # N actions per state in the E-step and the critic target
    use_retrace: bool = False
    retrace_steps: int = 2               # sequence length T of a Retrace target
    retrace_mc_actions: int = 8          # actions averaged for V(s') in Retrace
    retrace_lambda: float = 0.95         # trace cut c_t = lambda * min(1, pi/b)
    optimizer: str = "adam"              # adam (eps 1e-5) or sgd (with sgd_momentum)
    sgd_momentum: float = 0.9
    m_steps: int = 1                     # policy gradient steps per update (lr divided by it)

    def __post_init__(self):
        object.__setattr__(self, "policy_layer_sizes", tuple(self.policy_layer_sizes))
        object.__setattr__(self, "critic_layer_sizes", tuple(self.critic_layer_sizes))
        if self.optimizer not in ("adam", "sgd"):
            raise InputError(f"MPO optimizer must be 'adam' or 'sgd', got {self.optimizer!r}")
