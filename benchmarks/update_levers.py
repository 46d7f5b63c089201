"""What each lever of the agents' updates buys, in one process: the update as autograd and
PyTorch's default Adam run it, with fused Adam, and as the training loops run it now (one compiled
call for the gradients, core/compiled_updates.py, and compiled Adam and Polyak passes on flat
buffers, core/flat_networks.py); CPU time per update, the least of several rounds, the variants
interleaved round by round so that a busy neighbour slows all of them alike.

    PYTHONPATH=src:benchmarks OMP_NUM_THREADS=1 python benchmarks/update_levers.py [--rounds N]

The autograd variants are the reference computations of tests/unit/agents/test_agents_deep.py
(the loss each compiled update differentiates); their gradients agree to float32 rounding.
They zero the gradients in place: the compiled passes write into the same .grad tensors (views
of the flat buffers), which a zero_grad(set_to_none=True) would replace.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from bellman_problem import shipped  # noqa: E402

from rlstudy.agents import ddpg, dqn  # noqa: E402
from rlstudy.agents.replay import Batch  # noqa: E402
from rlstudy.core.memory import keep_freed_memory  # noqa: E402


def batch_of(obs_dim: int, size: int, discrete: bool) -> Batch:
    g = torch.Generator().manual_seed(1)
    actions = torch.randint(2, (size,), generator=g) if discrete else torch.rand(size, 1, generator=g) * 4 - 2
    return Batch(torch.rand(size, obs_dim, generator=g), actions, torch.rand(size, generator=g),
                 torch.rand(size, obs_dim, generator=g), torch.zeros(size))


def dqn_variants() -> dict:
    p = shipped(dqn.DQNParams, "dqn", "params")
    gen = torch.Generator().manual_seed(0)
    network, target = dqn.q_network(gym.make("CartPole-v1"), p, gen), dqn.q_network(gym.make("CartPole-v1"), p, gen)
    compiled = dqn.TDUpdate(network, target, p)
    b = batch_of(4, p.batch_size, True)

    def autograd(optimiser):
        def update():
            with torch.no_grad():
                targets = b.rewards + p.gamma * (1 - b.terminated) * target(b.next_observations).max(1).values
            chosen = network(b.observations).gather(1, b.actions[:, None]).squeeze(1)
            loss = F.mse_loss(chosen, targets)
            optimiser.zero_grad(set_to_none=False)
            loss.backward()
            optimiser.step()
        return update

    def by_compiled():
        compiled.gradients(b)
        compiled.step()
    return {"autograd, default Adam": autograd(torch.optim.Adam(network.parameters(), lr=p.learning_rate)),
            "autograd, fused Adam": autograd(torch.optim.Adam(network.parameters(), lr=p.learning_rate, fused=True)),
            "compiled update, flat Adam (kept)": by_compiled}


def ddpg_variants() -> dict:
    p = shipped(ddpg.DDPGParams, "ddpg", "params")
    env, gen = gym.make("Pendulum-v1"), torch.Generator().manual_seed(0)
    model, target = ddpg.ActorCritic(env, p, gen), ddpg.ActorCritic(env, p, gen)
    compiled = ddpg.Updates(model, target, p)
    b = batch_of(3, p.batch_size, False)

    def autograd(actor_optimiser, critic_optimiser):
        def update():
            with torch.no_grad():
                next_values = target.critic(b.next_observations, target.actor(b.next_observations))
                targets = b.rewards + p.gamma * (1 - b.terminated) * next_values
            loss = F.mse_loss(model.critic(b.observations, b.actions), targets)
            critic_optimiser.zero_grad(set_to_none=False)
            loss.backward()
            critic_optimiser.step()
            model.critic.requires_grad_(False)  # the actor's loss differentiates through the critic only
            actor_loss = -model.critic(b.observations, model.actor(b.observations)).mean()
            actor_optimiser.zero_grad(set_to_none=False)
            actor_loss.backward()
            model.critic.requires_grad_(True)
            actor_optimiser.step()
            with torch.no_grad():
                torch._foreach_lerp_(list(target.parameters()), list(model.parameters()), p.polyak)
        return update

    def by_compiled():
        compiled.critic_gradients(b)
        compiled.critic_optimiser.step()
        compiled.actor_gradients(b.observations)
        compiled.actor_optimiser.step()
        compiled.polyak_update()

    def adams(fused: bool):
        return (torch.optim.Adam(model.actor.parameters(), lr=p.actor_learning_rate, fused=fused),
                torch.optim.Adam(model.critic.parameters(), lr=p.critic_learning_rate, fused=fused))
    return {"autograd, default Adam": autograd(*adams(False)), "autograd, fused Adam": autograd(*adams(True)),
            "compiled updates, flat Adam (kept)": by_compiled}


def cpu_seconds(fn, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    keep_freed_memory()
    load = os.getloadavg()[0]
    for name, variants, calls in (("DQN update (CartPole, batch 128)", dqn_variants(), 200),
                                  ("DDPG critic+actor update (Pendulum, batch 256)", ddpg_variants(), 20)):
        best = {label: float("inf") for label in variants}
        for fn in variants.values():
            fn()  # warm-up: the optimisers' state
        for _ in range(args.rounds):
            for label, fn in variants.items():
                best[label] = min(best[label], cpu_seconds(fn, calls))
        first = next(iter(best.values()))
        print(name)
        for label, seconds in best.items():
            print(f"  {label:45s} {seconds * 1e3:7.3f} ms  ({first / seconds:.2f}x)")
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (2 cores)")


if __name__ == "__main__":
    main()
