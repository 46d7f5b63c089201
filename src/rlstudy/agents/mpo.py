"""MPO (Maximum a-posteriori Policy Optimisation) for continuous actions, readable top to bottom.

Acme-style MPO with decoupled KL constraints, reimplemented from the seed `mpo_agent.py.txt`:
- critic Q(s, a) and Gaussian policy pi(a|s) on layer-normed torsos (Linear -> LayerNorm -> tanh,
  then ELU layers); target copies of both, synced every `target_update_period` updates;
- policy evaluation: Q regresses on r + gamma * E_{a'~pi_target} Q_target(s', a') (expected SARSA
  over `action_samples` actions), or on Retrace targets over `retrace_steps`-long sequences;
- E-step: for N actions a_i ~ pi_target(.|s), the non-parametric policy q(a_i|s) = softmax_i(Q(s, a_i) / eta);
  the temperature eta minimises the dual  eta * (epsilon + mean_b log mean_i exp(Q_bi / eta));
- M-step: weighted maximum likelihood of the a_i under the online policy, split into a mean part
  (online mean, target std) and a std part (target mean, online std), each with its own KL penalty
  to the target policy; the multipliers alpha_mean, alpha_std are duals that grow while their KL
  exceeds `mstep_kl_epsilon` and shrink while it is below;
- every gradient is clipped to `max_grad_norm`; a batch with a non-finite value is skipped and counted.
Dual variables are stored unconstrained and mapped through softplus (as in the seed).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import ClassVar

import gymnasium as gym
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F

from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.errors import DivergenceError, InputError
from rlstudy.core.progress import progress

MIN_LOG_STD, MAX_LOG_STD = -20.0, 2.0
DUAL_FLOOR = -18.0  # unconstrained duals are clamped from below, so softplus never underflows to 0
SOFTPLUS_EPS = 1e-8


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


# ---------------------------------------------------------------- networks


def layer_norm_mlp(in_dim: int, sizes: tuple[int, ...]) -> nn.Sequential:
    """Acme's torso: Linear -> LayerNorm -> tanh, then Linear -> ELU for each further layer."""
    layers: list[nn.Module] = [nn.Linear(in_dim, sizes[0]), nn.LayerNorm(sizes[0]), nn.Tanh()]
    for width_in, width_out in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(width_in, width_out), nn.ELU()]
    return nn.Sequential(*layers)


class Critic(nn.Module):
    """Q(s, a) of the action clipped to the bounds, with a small-init linear head (Acme)."""

    def __init__(self, obs_dim: int, act_dim: int, sizes: tuple[int, ...], low: np.ndarray, high: np.ndarray):
        super().__init__()
        self.register_buffer("low", torch.as_tensor(low, dtype=torch.float32))
        self.register_buffer("high", torch.as_tensor(high, dtype=torch.float32))
        self.torso = layer_norm_mlp(obs_dim + act_dim, sizes)
        self.head = nn.Linear(sizes[-1], 1)
        nn.init.trunc_normal_(self.head.weight, std=0.01)
        nn.init.zeros_(self.head.bias)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        action = torch.clamp(action, self.low, self.high)
        return self.head(self.torso(torch.cat([obs, action], dim=-1))).squeeze(-1)


class GaussianPolicy(nn.Module):
    """A diagonal Gaussian over raw actions; the environment gets them clipped to the bounds."""

    def __init__(self, obs_dim: int, act_dim: int, sizes: tuple[int, ...], low: np.ndarray, high: np.ndarray):
        super().__init__()
        self.register_buffer("low", torch.as_tensor(low, dtype=torch.float32))
        self.register_buffer("high", torch.as_tensor(high, dtype=torch.float32))
        self.torso = layer_norm_mlp(obs_dim, sizes)
        self.mean = nn.Linear(sizes[-1], act_dim)
        self.log_std = nn.Linear(sizes[-1], act_dim)
        nn.init.kaiming_normal_(self.mean.weight, nonlinearity="linear")
        nn.init.zeros_(self.mean.bias)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.torso(obs)
        return self.mean(features), torch.clamp(self.log_std(features), MIN_LOG_STD, MAX_LOG_STD)

    def clip(self, action: torch.Tensor) -> torch.Tensor:
        return torch.clamp(action, self.low, self.high)

    def sample(self, obs: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
        """n raw actions per state, shape (B, n, D), drawn with the run's generator."""
        return sample_gaussian(*self(obs), n, generator)


def sample_gaussian(mean: torch.Tensor, log_std: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """n draws per row of (B, D) means and log-stds, shape (B, n, D); noise drawn on the CPU, so
    every device draws the same numbers."""
    noise = torch.randn((mean.shape[0], n, mean.shape[-1]), generator=generator).to(mean.device)
    return mean.unsqueeze(1) + log_std.exp().unsqueeze(1) * noise


def gaussian_log_prob(action: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """log N(action; mean, diag(std^2)), summed over the last (action) dimension."""
    return torch.distributions.Normal(mean, std).log_prob(action).sum(-1)


# ---------------------------------------------------------------- the losses, as functions


def kl_diag_gaussian(mean_p, log_std_p, mean_q, log_std_q) -> torch.Tensor:
    """KL(p || q) of diagonal Gaussians, per dimension:
    log(s_q / s_p) + (s_p^2 + (m_p - m_q)^2) / (2 s_q^2) - 1/2."""
    var_ratio = torch.exp(2.0 * (log_std_p - log_std_q))
    return 0.5 * (var_ratio + (mean_p - mean_q) ** 2 * torch.exp(-2.0 * log_std_q) - 1.0) + log_std_q - log_std_p


def e_step(q_values: torch.Tensor, temperature: torch.Tensor, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
    """E-step weights q_bi = softmax_i(Q_bi / eta) (no gradient) and the temperature's dual loss
    L_eta = eta * (epsilon + mean_b logsumexp_i(Q_bi / eta) - log N) (gradient into eta only)."""
    scaled = q_values.detach() / temperature
    weights = torch.softmax(scaled, dim=1).detach()
    loss = temperature * (epsilon + torch.logsumexp(scaled, dim=1).mean() - math.log(q_values.shape[1]))
    return weights, loss


def kl_to_uniform(weights: torch.Tensor) -> torch.Tensor:
    """KL(q_b || uniform over the N samples) per state: how far the E-step moved from pi_target."""
    return (weights * torch.log(weights.shape[1] * weights + 1e-8)).sum(dim=1)


def kl_dual_loss(alpha: torch.Tensor, kl: torch.Tensor, epsilon: float) -> torch.Tensor:
    """sum_j alpha_j (epsilon - KL_j): descending it raises alpha_j while KL_j > epsilon."""
    return (alpha * (epsilon - kl.detach())).sum()


def retrace_targets(q: torch.Tensor, v_next: torch.Tensor, rewards: torch.Tensor, terminated: torch.Tensor,
                    ends: torch.Tensor, c: torch.Tensor, gamma: float) -> torch.Tensor:
    """Retrace target of (s_0, a_0) from sequences of shape (B, T):
    Q_ret = Q(s_0, a_0) + sum_t gamma^t (prod_{i=1..t} c_i) m_t delta_t,
    delta_t = r_t + gamma (1 - terminated_t) V(s_{t+1}) - Q(s_t, a_t),
    m_t = prod_{i<t} (1 - ends_i): the trace stops at the end of an episode (terminated or truncated)."""
    steps = q.shape[1]
    delta = rewards + gamma * (1.0 - terminated) * v_next - q
    traces = torch.cat([torch.ones_like(c[:, :1]), torch.cumprod(c[:, 1:], dim=1)], dim=1)
    alive = torch.cat([torch.ones_like(ends[:, :1]), torch.cumprod(1.0 - ends[:, :-1], dim=1)], dim=1)
    discounts = gamma ** torch.arange(steps, dtype=q.dtype, device=q.device)
    return q[:, 0] + (discounts * traces * alive * delta).sum(dim=1)


def dual_value(unconstrained: torch.Tensor) -> torch.Tensor:
    return F.softplus(torch.clamp(unconstrained, min=DUAL_FLOOR)) + SOFTPLUS_EPS


# ---------------------------------------------------------------- replay


class Replay:
    """A circular buffer of transitions; samples single transitions or contiguous sequences."""

    FIELDS = ("obs", "action", "action_raw", "reward", "next_obs", "terminated", "end", "behaviour_logp")

    def __init__(self, capacity: int, obs_dim: int, act_dim: int):
        self.capacity, self.size, self.next = capacity, 0, 0
        shapes = {"obs": (obs_dim,), "action": (act_dim,), "action_raw": (act_dim,), "next_obs": (obs_dim,)}
        self.data = {name: np.zeros((capacity, *shapes.get(name, ())), dtype=np.float32) for name in self.FIELDS}

    def add(self, **transition) -> None:
        for name in self.FIELDS:
            self.data[name][self.next] = transition[name]
        self.next = (self.next + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, rng: np.random.Generator, batch: int, length: int = 1) -> dict[str, torch.Tensor]:
        """`batch` sequences of `length` consecutive transitions, shape (B, length, ...), in insertion
        order (sequences never run past the newest transition; episode ends are marked by `end`)."""
        oldest = (self.next - self.size) % self.capacity
        starts = rng.integers(0, self.size - length + 1, size=batch)
        rows = (oldest + starts[:, None] + np.arange(length)) % self.capacity
        return {name: torch.from_numpy(values[rows]) for name, values in self.data.items()}


# ---------------------------------------------------------------- the learner


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
        return torch.optim.Adam(parameters, lr=lr, eps=1e-5)

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
                v_next = self._expected_target_q(batch["next_obs"][:, 0], self.p.action_samples)
                return batch["reward"][:, 0] + self.p.gamma * (1.0 - batch["terminated"][:, 0]) * v_next
            q = self.critic_target(batch["obs"], batch["action"])
            v_next = self._expected_target_q(batch["next_obs"], self.p.retrace_mc_actions)
            mean, log_std = self.policy_target(batch["obs"])
            log_rho = gaussian_log_prob(batch["action_raw"], mean, log_std.exp()) - batch["behaviour_logp"]
            c = self.p.retrace_lambda * torch.clamp(log_rho.exp(), max=1.0)
            return retrace_targets(q, v_next, batch["reward"], batch["terminated"], batch["end"], c, self.p.gamma)

    def _step(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor, parameters) -> None:
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(parameters, self.p.max_grad_norm)
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
        q_loss = F.mse_loss(self.critic(batch["obs"][:, 0], batch["action"][:, 0]), target)
        if not torch.isfinite(q_loss):
            return self._skip()
        self._step(self.critic_opt, q_loss, self.critic.parameters())

        # E-step: N actions per state from the target policy, weighted by the target critic
        obs = batch["obs"][:, 0]
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


def policy_from_state_dict(state: dict[str, torch.Tensor], sizes: tuple[int, ...]) -> GaussianPolicy:
    """The trained policy of a saved MPO model (dimensions and bounds come from the tensors)."""
    policy_state = {k.removeprefix("policy."): v for k, v in state.items() if k.startswith("policy.")}
    low, high = policy_state["low"].numpy(), policy_state["high"].numpy()
    obs_dim = policy_state["torso.0.weight"].shape[1]
    policy = GaussianPolicy(obs_dim, len(low), tuple(sizes), low, high)
    policy.load_state_dict(policy_state)
    return policy.eval()


# ---------------------------------------------------------------- training and evaluation


def make_env(env_id: str, key: str, render_mode: str | None = None) -> gym.Env:
    """A gymnasium environment with a continuous (Box) action space; errors name the config key."""
    try:
        env = gym.make(env_id, render_mode=render_mode)
    except gym.error.Error as err:
        raise InputError(f"config key '{key}': cannot make gymnasium environment {env_id!r}: {err}") from err
    if not isinstance(env.action_space, gym.spaces.Box) or len(env.observation_space.shape) != 1:
        env.close()
        raise InputError(f"config key '{key}': MPO needs a continuous (Box) action space and flat observations; "
                         f"{env_id!r} has actions {env.action_space} and observations {env.observation_space}")
    return env


@dataclass
class TrainingResult:
    returns: pd.DataFrame       # episode, step, return
    diagnostics: pd.DataFrame   # step, then the means of `MPO.update`'s values over the rows' window
    agent: MPO


def train(env, params: MPOParams, device: torch.device, env_seed: int, rng: np.random.Generator,
          generator: torch.Generator, label: str, log: DiagnosticsLog | None = None) -> TrainingResult:
    """Train on `env` (a Box action space) for params.total_steps environment steps; `update`'s
    statistics go to `log` (a new one by default), a row every params.log_every steps."""
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    low, high = env.action_space.low.astype(np.float32), env.action_space.high.astype(np.float32)
    agent = MPO(obs_dim, act_dim, low, high, params, device, generator)
    replay = Replay(min(params.buffer_size, params.total_steps), obs_dim, act_dim)
    uniform_logp = -float(np.log(high - low).sum())
    length = params.retrace_steps if params.use_retrace else 1
    log = DiagnosticsLog() if log is None else log
    episodes = []
    obs, _ = env.reset(seed=env_seed)
    episode_return, window_skipped = 0.0, 0
    bar = progress(range(1, params.total_steps + 1), desc=label)
    for step in bar:
        if step <= params.learning_starts:
            action = rng.uniform(low, high).astype(np.float32)
            raw, logp = action, uniform_logp
        else:
            action, raw, logp = agent.act(obs, greedy=False)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        replay.add(obs=obs, action=action, action_raw=raw, reward=reward, next_obs=next_obs,
                   terminated=terminated, end=terminated or truncated, behaviour_logp=logp)
        obs, episode_return = next_obs, episode_return + float(reward)
        if terminated or truncated:
            episodes.append((len(episodes) + 1, step, episode_return))  # numbered from 1, as every agent
            bar.set_postfix(episode=len(episodes), last_return=f"{episode_return:.1f}", refresh=False)
            obs, _ = env.reset()
            episode_return = 0.0
        if step > params.learning_starts and replay.size >= length:
            for _ in range(params.updates_per_step):
                info = agent.update(replay.sample(rng, params.batch_size, length))
                if info is None:
                    window_skipped += 1
                else:
                    log.add(info)
        if step % params.log_every == 0 and (len(log) or window_skipped):
            if not len(log):
                raise DivergenceError(f"{label}: every batch of the {window_skipped} updates before step {step} "
                                      "had non-finite values")
            log.write("step", step, skipped_nonfinite_batches=agent.skipped_nonfinite_batches)
            window_skipped = 0
    returns = pd.DataFrame(episodes, columns=["episode", "step", "return"])
    return TrainingResult(returns, log.frame(), agent)


def evaluate(env, agent: MPO, episodes: int, seed: int) -> pd.DataFrame:
    """Greedy (mean) actions for `episodes` episodes; the env is seeded once, at the first reset."""
    returns = []
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed if episode == 0 else None)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(agent.act(obs, greedy=True)[0])
            total += float(reward)
            done = terminated or truncated
        returns.append((episode + 1, total))
    return pd.DataFrame(returns, columns=["episode", "return"])
