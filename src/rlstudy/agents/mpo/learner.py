"""MPO's learner: networks, their targets, the duals, and one update per replay batch (policy
evaluation, E-step, dual step, M-step)."""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import MPOParams
from .losses import dual_value, e_step, kl_diag_gaussian, kl_dual_loss, kl_to_uniform, retrace_targets
from .networks import Critic, GaussianPolicy, gaussian_log_prob, sample_gaussian


class MPO:
    """Networks, their targets, the duals and one `update` per replay batch."""

    def __init__(self, obs_dim: int, act_dim: int, low: np.ndarray, high: np.ndarray, params: MPOParams,
                 device: torch.device, generator: torch.Generator):
        self.p, self.device, self.generator = params, device, generator
        self.policy = GaussianPolicy(obs_dim, act_dim, params.policy_layer_sizes, low, high).to(device)
        self.critic = Critic(obs_dim, act_dim, params.critic_layer_sizes, low, high).to(device)
        self.policy_target = copy.deepcopy(self.policy).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.log_temperature = nn.Parameter(torch.tensor(params.temperature_init, device=device))
        self.log_alpha_mean = nn.Parameter(torch.full((act_dim,), params.init_log_alpha_mean, device=device))
        self.log_alpha_std = nn.Parameter(torch.full((act_dim,), params.init_log_alpha_stddev, device=device))
        self.policy_opt = self._optimizer(self.policy.parameters(), params.policy_lr / params.m_steps)
        self.critic_opt = self._optimizer(self.critic.parameters(), params.q_lr)
        self.dual_opt = self._optimizer([{"params": [self.log_temperature], "lr": params.temperature_lr},
                                         {"params": [self.log_alpha_mean, self.log_alpha_std],
                                          "lr": params.lambda_lr}], params.lambda_lr)
        self.updates = 0
        self.skipped_nonfinite_batches = 0

    def _optimizer(self, parameters, lr: float) -> torch.optim.Optimizer:
        if self.p.optimizer == "sgd":
            return torch.optim.SGD(parameters, lr=lr, momentum=self.p.sgd_momentum)
        return torch.optim.Adam(parameters, lr=lr, eps=1e-5, fused=True)  # one pass over every parameter

    def act(self, obs: np.ndarray, greedy: bool) -> tuple[np.ndarray, np.ndarray, float]:
        """(clipped action for the environment, raw action, its log-probability under the policy)."""
        with torch.no_grad():
            obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device).unsqueeze(0)
            mean, log_std = self.policy(obs_t)
            if greedy:
                raw = mean
            else:
                raw = mean + log_std.exp() * torch.randn(mean.shape, generator=self.generator).to(self.device)
            logp = gaussian_log_prob(raw, mean, log_std.exp())
            return self.policy.clip(raw)[0].cpu().numpy(), raw[0].cpu().numpy(), float(logp)

    def _expected_target_q(self, obs: torch.Tensor, n: int) -> torch.Tensor:
        """E_{a ~ pi_target} Q_target(s, a) by n samples; obs (..., obs_dim) -> (...)."""
        flat = obs.reshape(-1, obs.shape[-1])
        actions = self.policy_target.sample(flat, n, self.generator)
        q = self.critic_target(flat.unsqueeze(1).expand(-1, n, -1), actions).mean(dim=1)
        return q.reshape(obs.shape[:-1])

    def _critic_target(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """One-step expected-SARSA target, or Retrace over the sequence (target networks throughout)."""
        with torch.no_grad():
            if not self.p.use_retrace:
                v_next = self._expected_target_q(batch["next_observations"][:, 0], self.p.action_samples)
                return batch["rewards"][:, 0] + self.p.gamma * (1.0 - batch["terminated"][:, 0]) * v_next
            q = self.critic_target(batch["observations"], batch["actions"])
            v_next = self._expected_target_q(batch["next_observations"], self.p.retrace_mc_actions)
            mean, log_std = self.policy_target(batch["observations"])
            log_rho = gaussian_log_prob(batch["actions_raw"], mean, log_std.exp()) - batch["behaviour_log_probs"]
            c = self.p.retrace_lambda * torch.clamp(log_rho.exp(), max=1.0)
            return retrace_targets(q, v_next, batch["rewards"], batch["terminated"], batch["ends"], c, self.p.gamma)

    def _step(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor, parameters) -> None:
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(parameters, self.p.max_grad_norm, foreach=True)
        optimizer.step()

    def _skip(self) -> None:
        self.skipped_nonfinite_batches += 1
        return None

    def update(self, batch: dict[str, torch.Tensor]) -> dict[str, float] | None:
        """One critic step, one dual step, m_steps policy steps. None when the batch was skipped
        because a value on the way (inputs, targets, Q samples) was not finite."""
        if self.updates % self.p.target_update_period == 0:
            self.policy_target.load_state_dict(self.policy.state_dict())
            self.critic_target.load_state_dict(self.critic.state_dict())
        self.updates += 1
        batch = {name: value.to(self.device) for name, value in batch.items()}
        if not all(torch.isfinite(value).all() for value in batch.values()):
            return self._skip()

        # policy evaluation
        target = self._critic_target(batch)
        q_loss = F.mse_loss(self.critic(batch["observations"][:, 0], batch["actions"][:, 0]), target)
        if not torch.isfinite(q_loss):
            return self._skip()
        self._step(self.critic_opt, q_loss, self.critic.parameters())

        # E-step: N actions per state from the target policy, weighted by the target critic
        obs = batch["observations"][:, 0]
        n = self.p.action_samples
        with torch.no_grad():
            mean_target, log_std_target = self.policy_target(obs)
            actions = sample_gaussian(mean_target, log_std_target, n, self.generator)
            q_samples = self.critic_target(obs.unsqueeze(1).expand(-1, n, -1), actions)
            mean_online, log_std_online = self.policy(obs)
        if not torch.isfinite(q_samples).all():
            return self._skip()
        temperature = dual_value(self.log_temperature)
        weights, loss_temperature = e_step(q_samples, temperature, self.p.kl_epsilon)

        # duals: temperature, and alpha_mean / alpha_std from the KLs before the M-step
        kl_mean = kl_diag_gaussian(mean_target, log_std_target, mean_online, log_std_target).mean(0)
        kl_std = kl_diag_gaussian(mean_target, log_std_target, mean_target, log_std_online).mean(0)
        loss_alpha = (kl_dual_loss(dual_value(self.log_alpha_mean), kl_mean, self.p.mstep_kl_epsilon)
                      + kl_dual_loss(dual_value(self.log_alpha_std), kl_std, self.p.mstep_kl_epsilon))
        duals = [self.log_temperature, self.log_alpha_mean, self.log_alpha_std]
        self._step(self.dual_opt, loss_temperature + loss_alpha, duals)

        # M-step: weighted maximum likelihood, mean and std decoupled, each held near the target
        alpha_mean, alpha_std = dual_value(self.log_alpha_mean).detach(), dual_value(self.log_alpha_std).detach()
        for _ in range(self.p.m_steps):
            mean, log_std = self.policy(obs)
            log_prob_mean = gaussian_log_prob(actions, mean.unsqueeze(1), log_std_target.exp().unsqueeze(1))
            log_prob_std = gaussian_log_prob(actions, mean_target.unsqueeze(1), log_std.exp().unsqueeze(1))
            loss_policy = -(weights * (log_prob_mean + log_prob_std)).sum(1).mean()
            kl_mean = kl_diag_gaussian(mean_target, log_std_target, mean, log_std_target).mean(0)
            kl_std = kl_diag_gaussian(mean_target, log_std_target, mean_target, log_std).mean(0)
            loss_kl = (alpha_mean * kl_mean).sum() + (alpha_std * kl_std).sum()
            self._step(self.policy_opt, loss_policy + loss_kl, self.policy.parameters())

        diagnostics = {
            "temperature": dual_value(self.log_temperature),
            "kl_mean": kl_mean.mean(),
            "kl_std": kl_std.mean(),
            "kl_e_step": kl_to_uniform(weights).mean(),
            "alpha_mean": alpha_mean.mean(),
            "alpha_std": alpha_std.mean(),
            "q_min": q_samples.min(),
            "q_mean": q_samples.mean(),
            "q_max": q_samples.max(),
            "loss_q": q_loss,
            "loss_policy": loss_policy,
            "loss_temperature": loss_temperature,
            "loss_alpha": loss_alpha,
        }
        return {name: float(value.detach()) for name, value in diagnostics.items()}

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {**{f"policy.{k}": v for k, v in self.policy.state_dict().items()},
                **{f"critic.{k}": v for k, v in self.critic.state_dict().items()},
                "log_temperature": self.log_temperature.detach(),
                "log_alpha_mean": self.log_alpha_mean.detach(),
                "log_alpha_std": self.log_alpha_std.detach()}
