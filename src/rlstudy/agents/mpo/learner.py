"""MPO's learner: networks, their targets, the duals, and one update per replay batch (policy
evaluation, E-step, dual step, M-step), its gradients written by hand in NumPy (passes.py; the
tests hold them against autograd) and each optimiser's Adam step one compiled pass (core/flat_networks.FlatAdam).
Every STATISTICS_EVERY-th update returns its statistics (docs/diagnostics.md), the others an empty dict:
the statistics and the losses only they read are a few per cent of an update."""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn as nn

from rlstudy.core.diagnostics import STATISTICS_EVERY
from rlstudy.core.flat_networks import FlatAdam

from .config import MPOParams
from .flat import SGD, FlatParameters
from .losses import dual_value, e_step, gaussian_log_prob, kl_diag_gaussian, kl_dual_loss, kl_to_uniform, retrace_targets
from .networks import Critic, GaussianPolicy
from .passes import CriticPasses, PolicyPasses


class MPO:
    """Networks, their targets, the duals and one `update` per replay batch. Runs on the CPU whatever
    `device` asks for (the passes are NumPy's); `self.device` says where, for the run's record."""

    def __init__(self, obs_dim: int, act_dim: int, low: np.ndarray, high: np.ndarray, params: MPOParams,
                 device: torch.device, generator: torch.Generator):
        self.p, self.device, self.generator = params, torch.device("cpu"), generator
        self.policy = GaussianPolicy(obs_dim, act_dim, params.policy_layer_sizes, low, high)
        self.critic = Critic(obs_dim, act_dim, params.critic_layer_sizes, low, high)
        self.policy_target = copy.deepcopy(self.policy).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.log_temperature = nn.Parameter(torch.tensor(params.temperature_init))
        self.log_alpha_mean = nn.Parameter(torch.full((act_dim,), params.init_log_alpha_mean))
        self.log_alpha_std = nn.Parameter(torch.full((act_dim,), params.init_log_alpha_stddev))
        self.policy_flat, self.critic_flat = FlatParameters(self.policy.parameters()), FlatParameters(self.critic.parameters())
        self.dual_flat = FlatParameters([self.log_temperature, self.log_alpha_mean, self.log_alpha_std])
        self.policy_target_flat = FlatParameters(self.policy_target.parameters())
        self.critic_target_flat = FlatParameters(self.critic_target.parameters())
        self.online = PolicyPasses(self.policy), CriticPasses(self.critic)
        self.targets = PolicyPasses(self.policy_target), CriticPasses(self.critic_target)
        self.policy_opt = self._optimizers(self.policy_flat, [(0, params.policy_lr / params.m_steps)])
        self.critic_opt = self._optimizers(self.critic_flat, [(0, params.q_lr)])
        # the first element is the temperature's, the rest the alphas'
        self.dual_opt = self._optimizers(self.dual_flat, [(0, params.temperature_lr), (1, params.lambda_lr)])
        self.low, self.high = np.asarray(low, dtype=np.float32), np.asarray(high, dtype=np.float32)
        self.updates = 0
        self.skipped_nonfinite_batches = 0

    def _optimizers(self, flat: FlatParameters, groups: list[tuple[int, float]]) -> tuple[FlatParameters, list]:
        """The flat parameters and one optimiser per group (its first element and learning rate; a
        group runs to the next one's first element)."""
        bounds = [start for start, _ in groups[1:]] + [flat.values.size]
        parts = [(flat.part(start, stop), lr) for (start, lr), stop in zip(groups, bounds)]
        if self.p.optimizer == "sgd":
            return flat, [SGD(part, lr, self.p.sgd_momentum) for part, lr in parts]
        return flat, [FlatAdam(part, lr, eps=1e-5) for part, lr in parts]

    def act(self, obs: np.ndarray, greedy: bool) -> tuple[np.ndarray, np.ndarray, float]:
        """(clipped action for the environment, raw action, its log-probability under the policy)."""
        mean, log_std, _ = self.online[0].forward(np.asarray(obs, dtype=np.float32)[None])
        raw = mean if greedy else mean + np.exp(log_std) * torch.randn(mean.shape, generator=self.generator).numpy()
        logp = gaussian_log_prob(raw, mean, log_std)
        return np.clip(raw, self.low, self.high)[0], raw[0], float(logp[0])

    def _sample(self, mean: np.ndarray, log_std: np.ndarray, n: int) -> np.ndarray:
        """n raw actions per row of (S, D) means and log-stds, shape (S, n, D), drawn with the run's generator."""
        noise = torch.randn((mean.shape[0], n, mean.shape[1]), generator=self.generator).numpy()
        return mean[:, None] + np.exp(log_std)[:, None] * noise

    def _target_samples(self, states: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """pi_target's mean and log-std at each state, n actions drawn from it, and Q_target of each: (S, n)."""
        mean, log_std, _ = self.targets[0].forward(states)
        actions = self._sample(mean, log_std, n)
        return mean, log_std, actions, self.targets[1].values(states, actions)

    def _retrace_target(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """Retrace over the sequence (target networks throughout)."""
        observations, actions = batch["observations"], batch["actions"]
        rows, steps = observations.shape[:2]
        flat = observations.reshape(rows * steps, -1)
        q = self.targets[1].forward(flat, actions.reshape(rows * steps, -1))[0].reshape(rows, steps)
        next_flat = batch["next_observations"].reshape(rows * steps, -1)
        v_next = self._target_samples(next_flat, self.p.retrace_mc_actions)[3].mean(axis=1).reshape(rows, steps)
        mean, log_std, _ = self.targets[0].forward(flat)
        log_rho = (gaussian_log_prob(batch["actions_raw"].reshape(rows * steps, -1), mean, log_std).reshape(rows, steps)
                   - batch["behaviour_log_probs"])
        c = self.p.retrace_lambda * np.minimum(np.exp(log_rho), 1.0)
        return retrace_targets(q, v_next, batch["rewards"], batch["terminated"], batch["ends"], c, self.p.gamma)

    def _step(self, optimizers: tuple[FlatParameters, list]) -> None:
        """Clips the gradient (all of the flat parameters together) to max_grad_norm, then steps each group."""
        flat, steps = optimizers
        flat.clip_gradient(self.p.max_grad_norm)
        for optimizer in steps:
            optimizer.step()

    def _skip(self) -> None:
        self.skipped_nonfinite_batches += 1
        return None

    def update(self, batch: dict[str, torch.Tensor]) -> dict[str, float] | None:
        """One critic step, one dual step, m_steps policy steps; the statistics of every STATISTICS_EVERY-th
        update (the 0th, 10th, ...), an empty dict for the others. None when the batch was skipped
        because a value on the way (inputs, targets, Q samples) was not finite."""
        if self.updates % self.p.target_update_period == 0:
            np.copyto(self.policy_target_flat.values, self.policy_flat.values)  # one pass per network
            np.copyto(self.critic_target_flat.values, self.critic_flat.values)
        measure = self.updates % STATISTICS_EVERY == 0
        self.updates += 1
        batch = {name: value.numpy() for name, value in batch.items()}
        if not all(np.isfinite(value).all() for value in batch.values()):
            return self._skip()
        obs, n = batch["observations"][:, 0], self.p.action_samples
        rows = len(obs)
        policy, critic = self.online

        # the target networks at s' (the critic's target) and at s (the E-step) in one evaluation
        if self.p.use_retrace:
            target = self._retrace_target(batch)
            mean_target, log_std_target, actions, q_samples = self._target_samples(obs, n)
        else:
            mean_target, log_std_target, actions, q_samples = self._target_samples(
                np.concatenate([batch["next_observations"][:, 0], obs]), n)
            v_next = q_samples[:rows].mean(axis=1)
            target = batch["rewards"][:, 0] + self.p.gamma * (1.0 - batch["terminated"][:, 0]) * v_next
            mean_target, log_std_target = mean_target[rows:], log_std_target[rows:]
            actions, q_samples = actions[rows:], q_samples[rows:]

        # policy evaluation: mean squared TD error
        q, cache = critic.forward(obs, batch["actions"][:, 0])
        error = q - target
        q_loss = np.mean(error * error)
        if not np.isfinite(q_loss):
            return self._skip()
        critic.backward(cache, error * np.float32(2.0 / rows))
        self._step(self.critic_opt)

        # E-step: weights of the N actions per state from the target critic
        if not np.isfinite(q_samples).all():
            return self._skip()
        act_dim = mean_target.shape[1]
        dual_values, dual_slopes = dual_value(self.dual_flat.values)  # temperature, alpha_mean, alpha_std
        temperature = dual_values[0]
        weights, loss_temperature, grad_temperature = e_step(q_samples, temperature, self.p.kl_epsilon)

        # duals: temperature, and alpha_mean / alpha_std from the KLs before the M-step
        mean, log_std, policy_cache = policy.forward(obs)
        kl_mean, kl_std = self._kls(mean_target, log_std_target, mean, log_std)
        eps = self.p.mstep_kl_epsilon
        alpha_mean, alpha_std = dual_values[1:1 + act_dim], dual_values[1 + act_dim:]
        loss_alpha = kl_dual_loss(alpha_mean, kl_mean, eps) + kl_dual_loss(alpha_std, kl_std, eps) if measure else None
        grads = self.dual_flat.grads
        grads[0] = grad_temperature
        grads[1:] = eps - np.concatenate([kl_mean, kl_std])
        grads *= dual_slopes
        self._step(self.dual_opt)

        # M-step: weighted maximum likelihood, mean and std decoupled, each held near the target
        dual_values = dual_value(self.dual_flat.values)[0]
        alpha_mean, alpha_std = dual_values[1:1 + act_dim], dual_values[1 + act_dim:]
        for m_step in range(self.p.m_steps):
            if m_step:
                mean, log_std, policy_cache = policy.forward(obs)
                kl_mean, kl_std = self._kls(mean_target, log_std_target, mean, log_std)
            if measure and m_step == self.p.m_steps - 1:
                loss_policy = self._policy_loss(weights, actions, mean_target, log_std_target, mean, log_std)
            self._policy_gradients(weights, actions, mean_target, log_std_target, mean, log_std, alpha_mean,
                                   alpha_std, policy_cache)
            self._step(self.policy_opt)

        if not measure:
            return {}
        diagnostics = {
            "temperature": dual_values[0],
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
        return {name: float(value) for name, value in diagnostics.items()}

    @staticmethod
    def _kls(mean_target, log_std_target, mean, log_std) -> tuple[np.ndarray, np.ndarray]:
        """KL(pi_target || pi) per action dimension, averaged over the batch: of the mean part
        (online mean, target std) and of the std part (target mean, online std)."""
        return (kl_diag_gaussian(mean_target, log_std_target, mean, log_std_target).mean(axis=0),
                kl_diag_gaussian(mean_target, log_std_target, mean_target, log_std).mean(axis=0))

    @staticmethod
    def _policy_loss(weights, actions, mean_target, log_std_target, mean, log_std) -> np.float32:
        """The M-step loss's first term (the diagnostics' loss_policy):
        -mean_b sum_i q_bi [log N(a_bi; mu_b, s_target) + log N(a_bi; mu_target, s_b)]."""
        return -(weights * (gaussian_log_prob(actions, mean[:, None], log_std_target[:, None])
                            + gaussian_log_prob(actions, mean_target[:, None], log_std[:, None]))).sum(axis=1).mean()

    def _policy_gradients(self, weights, actions, mean_target, log_std_target, mean, log_std,
                          alpha_mean, alpha_std, cache) -> None:
        """The gradient in the policy's parameters, written into their .grad, of the M-step loss
        _policy_loss + sum_j alpha_mean_j KL_mean_j + alpha_std_j KL_std_j.
        In mu:  -(1/B) sum_i q_bi (a_bi - mu_b) / s_target^2 + alpha_mean (mu_b - mu_target) / (B s_target^2);
        in log s:  -(1/B) sum_i q_bi ((a_bi - mu_target)^2 / s^2 - 1) + alpha_std (1 - s_target^2 / s^2) / B."""
        rows = np.float32(len(mean))
        weights = weights[..., None]
        target_precision = np.exp(-2.0 * log_std_target)
        weighted_actions = (weights * actions).sum(axis=1)
        total = weights.sum(axis=1)
        grad_mean = ((mean * total - weighted_actions) + alpha_mean * (mean - mean_target)) * target_precision / rows
        spread = (weights * (actions - mean_target[:, None]) ** 2).sum(axis=1)
        variance_ratio = np.exp(2.0 * (log_std_target - log_std))
        grad_log_std = ((total - spread * np.exp(-2.0 * log_std)) + alpha_std * (1.0 - variance_ratio)) / rows
        self.online[0].backward(cache, grad_mean, grad_log_std)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """Each tensor on its own (a copy): the parameters themselves are views of the flat arrays."""
        return {**{f"policy.{k}": v.clone() for k, v in self.policy.state_dict().items()},
                **{f"critic.{k}": v.clone() for k, v in self.critic.state_dict().items()},
                "log_temperature": self.log_temperature.detach().clone(),
                "log_alpha_mean": self.log_alpha_mean.detach().clone(),
                "log_alpha_std": self.log_alpha_std.detach().clone()}
