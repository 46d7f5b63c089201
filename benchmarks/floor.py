"""How far each hot kernel is from this machine's floor.

For every hot kernel (an SGD mini-batch per estimator, a CBO step in both settings, the basics
agents' updates, BCQ's and the offline DQN's update) this prints its measured time, its arithmetic counted from the
shapes it works on (matrix-product flops, transcendental calls), the floor that arithmetic
implies at the machine's best measured rate for each primitive, and floor / time.

"Best measured" is per primitive, over every correct implementation at hand, not the one in use:
a matrix product of each shape used is timed with PyTorch and with NumPy (OpenBLAS) and the
fastest counts, NumPy's also under OpenBLAS's own choice of kernels where the environment pins them
(OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE: set on some machines here; timed in a child process without
them, as the machine's notes allow for a benchmark; the workflow and the tests keep the pin); a float32 cosine (and sine and cosine of one argument) with NumPy, PyTorch and
the compiled kernels of rlstudy.bellman.numerics.compiled.trig; exp, log, tanh with NumPy and PyTorch. Everything
runs on one thread, as the workflow's rules do, and is timed in CPU time of the process, so that
the wait for a core on a shared machine does not count: the least over ROUNDS rounds, each of which
times every kernel once and then every primitive, so that a kernel and its floor are read from the
same minutes of a machine whose speed drifts. What the floor leaves out: element-wise passes
(bias adds, products with the derivative, sums), random numbers, Python and memory traffic; so
a kernel at 100 % would be arithmetic and nothing else.

The SGD and CBO kernels are timed inside train_sgd and train_cbo (so the error meter, the batch
draw and the diagnostics are in); their arithmetic is counted from the network's shapes. The
agents' updates are timed as the training loops call them, and their arithmetic is counted from
the layers' shapes too (their passes run in NumPy or compiled code, which PyTorch's profiler does
not see): matrix products with their shapes, transcendental calls with their counts.

    PYTHONPATH=src python benchmarks/floor.py              # print the table
    PYTHONPATH=src python benchmarks/floor.py --write      # and write it into docs/speed.md
    PYTHONPATH=src python benchmarks/floor.py --quick      # fewer repeats (a smoke test)
    PYTHONPATH=src python benchmarks/floor.py --only DQN BCQ   # the kernels whose names hold any of these

--write replaces the block between the `floor:begin` and `floor:end` markers of docs/speed.md,
with the commit, the date and the machine read at run time.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy and PyTorch start their thread pools: one thread, as the rules

import argparse  # noqa: E402
import collections  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from record import DOC, ROOT, commit, load_note, machine, now, write_block  # noqa: E402

from rlstudy.core.memory import keep_freed_memory  # noqa: E402

keep_freed_memory()  # as every training step does (core/cli.setup_torch): its arrays' pages are reused
HIDDEN, ACTIONS, INPUTS = 50, 2, 2  # the Q network of bellman/numerics/compiled/qnet.py


ROUNDS = 5  # rounds of timing: each times every kernel once, then every primitive; each one's least time is read


class Kernel:
    """A kernel's row as the workflow runs it: `fn` does `per` mini-batches, steps or updates; `best`
    is its least CPU seconds per one over the rounds' calls (see main: the rounds interleave the
    kernels and the primitives, so a drift of the machine's speed meets both alike)."""

    def __init__(self, fn, per: int):
        self.fn, self.per, self.best = fn, per, math.inf

    def time_once(self) -> None:
        start = time.process_time()
        self.fn()
        self.best = min(self.best, (time.process_time() - start) / self.per)


def best_time(fn, repeats: int) -> float:
    """The least CPU time of this process over `repeats` calls, after a warm-up call. CPU time, not
    wall time: on a shared machine a process waits for a core, and that wait is not the kernel's
    (everything here runs on one thread, so the process's CPU time is the kernel's)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


# ---- primitives: the best measured implementation of each -----------------------------------

KERNEL_PIN = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")  # unset together (the machine's notes)


def gemm_times(m: int, k: int, n: int, repeats: int) -> tuple[float, float]:
    """Best CPU seconds of PyTorch's and NumPy's (m, k) @ (k, n) float32 product."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.rand(m, k, generator=gen), torch.rand(k, n, generator=gen)
    an, bn = a.numpy(), b.numpy()
    # the least of at least 20 calls: a product of a few ms is easily caught by a passing hiccup
    calls = max(20, min(repeats * 4, int(2e8 / max(1, m * k * n))))
    return best_time(lambda: torch.mm(a, b), calls), best_time(lambda: np.matmul(an, bn), calls)


class Primitives:
    """Best measured times of matrix products (per shape) and rates of transcendentals, each the best
    over every round that measured it (measure)."""

    def __init__(self, repeats: int):
        self.repeats = repeats
        self.gemm_times: dict[tuple[int, int, int], dict[str, float]] = {}  # shape -> implementation -> seconds
        self.unpinned: dict[tuple[int, int, int], float] = {}  # NumPy's products without the kernel pin
        self.unpinned_kernels: str | None = None
        self.rates: dict[str, dict[str, float]] = {}  # primitive -> implementation -> calls per second

    def measure(self, shapes: set[tuple[int, int, int]]) -> None:
        """One round: every transcendental's implementations and PyTorch's and NumPy's product of every
        shape, each timed again and its best kept."""
        self._measure_transcendentals()
        for shape in sorted(shapes):
            times = self.gemm_times.setdefault(shape, {})
            for name, seconds in zip(("torch.mm", "numpy.matmul"), gemm_times(*shape, self.repeats)):
                times[name] = min(seconds, times.get(name, math.inf))

    def fastest(self, shape: tuple[int, int, int]) -> tuple[float, str]:
        """A shape's fastest product, (seconds, implementation): PyTorch, NumPy, or NumPy under
        OpenBLAS's own kernels (time_unpinned_gemms)."""
        times = self.gemm_times[shape]
        if shape in self.unpinned:
            times = {**times, f"numpy.matmul, OpenBLAS {self.unpinned_kernels}": self.unpinned[shape]}
        name = min(times, key=times.get)
        return times[name], name

    def gemm(self, m: int, k: int, n: int) -> float:
        """Seconds of the fastest (m, k) @ (k, n) float32 product (measured by `measure`)."""
        return self.fastest((m, k, n))[0]

    def time_unpinned_gemms(self, shapes: set[tuple[int, int, int]]) -> None:
        """Where the environment pins OpenBLAS's kernels, NumPy's product of each shape timed in a
        child process without the pin (OpenBLAS then picks its kernels from the CPU)."""
        if not any(name in os.environ for name in KERNEL_PIN):
            return
        env = {name: value for name, value in os.environ.items() if name not in KERNEL_PIN}
        result = subprocess.run([sys.executable, __file__, "--numpy-gemms", json.dumps(sorted(shapes)),
                                 "--repeats", str(self.repeats)], env=env, capture_output=True, text=True, check=True)
        child = json.loads(result.stdout)
        self.unpinned_kernels = child["kernels"]
        self.unpinned = {tuple(shape): seconds for shape, seconds in child["times"]}

    def _measure_transcendentals(self) -> None:
        from rlstudy.bellman.numerics.compiled import trig

        x = (torch.rand(20_000, HIDDEN, generator=torch.Generator().manual_seed(1)) * 8 - 4).numpy()
        positive = np.abs(x) + np.float32(0.1)
        t = torch.from_numpy(x)
        tp = torch.from_numpy(positive)
        candidates = {
            "cos": {"numpy": lambda: np.cos(x), "torch": lambda: torch.cos(t), "trig.cos (compiled)": lambda: trig.cos(x)},
            "sin+cos": {"numpy": lambda: (np.sin(x), np.cos(x)), "torch": lambda: (torch.sin(t), torch.cos(t)),
                        "trig.sincos (compiled)": lambda: trig.sincos(x)},
            "exp": {"numpy": lambda: np.exp(x), "torch": lambda: torch.exp(t)},
            "log": {"numpy": lambda: np.log(positive), "torch": lambda: torch.log(tp)},
            "tanh": {"numpy": lambda: np.tanh(x), "torch": lambda: torch.tanh(t)},
        }
        for name, impls in candidates.items():
            rates = self.rates.setdefault(name, {})
            for impl, fn in impls.items():
                rates[impl] = max(x.size / best_time(fn, self.repeats * 4), rates.get(impl, 0.0))

    def best_rate(self, name: str) -> tuple[float, str]:
        """The fastest implementation's rate of a transcendental, and its name."""
        winner = max(self.rates[name], key=self.rates[name].get)
        return self.rates[name][winner], winner

    def transcendental(self, name: str, count: float) -> float:
        return count / self.best_rate(name)[0]

    def gemm_rate(self, m: int, k: int, n: int) -> float:
        return 2 * m * k * n / self.gemm(m, k, n)


# ---- the kernels ------------------------------------------------------------------------------

@dataclass
class Arithmetic:
    """What a kernel computes: matrix products (shape -> count) and transcendentals (name -> calls)."""
    gemms: collections.Counter = field(default_factory=collections.Counter)
    calls: collections.Counter = field(default_factory=collections.Counter)

    def add_gemm(self, m: int, k: int, n: int, count: int = 1) -> None:
        self.gemms[(m, k, n)] += count

    def flops(self) -> float:
        return sum(2 * m * k * n * c for (m, k, n), c in self.gemms.items())

    def floor(self, prims: Primitives) -> float:
        return (sum(prims.gemm(*shape) * c for shape, c in self.gemms.items())
                + sum(prims.transcendental(name, c) for name, c in self.calls.items()))

    def describe(self) -> str:
        calls = ", ".join(f"{c / 1e6:.3g} M {name}" for name, c in sorted(self.calls.items()) if c)
        return f"{self.flops() / 1e9:.3g} GFLOP" + (f"; {calls}" if calls else "")


def qnet_forward(arith: Arithmetic, rows: int, trig_name: str = "cos", count: int = 1) -> None:
    """One forward pass of the 2-50-50-2 cosine network over `rows` inputs."""
    for k, n in ((INPUTS, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, ACTIONS)):
        arith.add_gemm(rows, k, n, count)
    arith.calls[trig_name] += 2 * rows * HIDDEN * count


def meter_arithmetic(arith: Arithmetic) -> None:
    from rlstudy.bellman.learners.metrics import GRID_POINTS
    qnet_forward(arith, GRID_POINTS)  # one forward on the grid per step, both references share it


def trajectory(n: int):
    from bellman_problem import DYNAMICS
    from rlstudy.bellman.numerics.compiled.residuals import TrajectoryTensors
    from rlstudy.bellman.problem.sde import sample_trajectory
    traj = sample_trajectory("uniform", n, DYNAMICS, np.random.default_rng(0))
    return TrajectoryTensors.from_arrays(traj.states, traj.action_indices, traj.rewards)


def make_meter():
    from rlstudy.bellman.learners.metrics import ErrorMeter, q_on_grid
    from rlstudy.bellman.numerics.compiled.qnet import init_params
    refs = init_params(2, torch.Generator().manual_seed(5))
    return ErrorMeter({"error": q_on_grid(refs[0]), "error_exact": q_on_grid(refs[1])})


def sgd_kernel(estimator: str, batch: int, batches: int):
    """Seconds per mini-batch of train_sgd (the given estimator, control task) and its arithmetic."""
    from bellman_problem import PROBLEM, SGD_CONTROL
    from rlstudy.bellman.numerics.compiled.qnet import init_params
    from rlstudy.bellman.learners.sgd import SGDParams, train_sgd

    traj = trajectory(batch * batches + 3)
    params = SGDParams(**{**SGD_CONTROL, "epochs": 1, "batch_size": batch})  # the shipped control setting, one epoch
    theta = init_params(1, torch.Generator().manual_seed(2))[0]
    meter = make_meter()

    def run():
        train_sgd(theta, traj, estimator, "control", params, PROBLEM, torch.Generator().manual_seed(3), meter)

    return Kernel(run, batches), sgd_arithmetic(estimator, batch)


def sgd_arithmetic(estimator: str, batch: int) -> Arithmetic:
    """The arithmetic of one SGD mini-batch of `batch` transitions (the error meter's pass included)."""
    from rlstudy.bellman.numerics.compiled.backend import TRANSITIONS_PER_PASS
    from rlstudy.bellman.numerics.compiled.residuals import rows_per_sample

    arith = Arithmetic()
    part = min(batch, TRANSITIONS_PER_PASS)  # the mini-batch goes through the network in parts: their shapes
    for transitions, count in ((part, batch // part), (batch % part, 1)):
        if not transitions:
            continue
        grad_rows, next_rows = 2 * transitions, transitions * (rows_per_sample(estimator) - 2)
        qnet_forward(arith, grad_rows, "sin+cos", count)  # with their derivatives: sine and cosine of both layers
        if next_rows:
            qnet_forward(arith, next_rows, count=count)
        # the backward pass: dW3, dQ/dh2, dW2, dQ/dh1, dW1
        for shape in ((ACTIONS, grad_rows, HIDDEN), (grad_rows, ACTIONS, HIDDEN), (HIDDEN, grad_rows, HIDDEN),
                      (grad_rows, HIDDEN, HIDDEN), (INPUTS, grad_rows, HIDDEN)):
            arith.add_gemm(*shape, count)
    arith.calls["sin+cos"] += batch * (rows_per_sample(estimator) - 2)  # features of UR's and BFF's s^' (float64)
    meter_arithmetic(arith)
    return arith


def cbo_kernel(setting: str, steps: int):
    """Seconds per step of train_cbo in a setting of config.yaml (`cbo` is the notebook's) and its arithmetic."""
    from bellman_problem import CBO_SETTINGS, PROBLEM
    from rlstudy.bellman.learners.cbo import CBOParams, initial_swarm, train_cbo

    estimator = {"cbo": "UR", "cbo-adaptive": "BFF-matched"}[setting]
    params = CBOParams(**{**CBO_SETTINGS[setting], "epochs": steps})
    traj = trajectory(200_000)
    swarm = initial_swarm(params, torch.Generator().manual_seed(4), 1.0)
    meter = make_meter()

    def run():
        train_cbo(swarm, traj, estimator, "control", params, PROBLEM, torch.Generator().manual_seed(6), meter)

    return Kernel(run, steps), cbo_arithmetic(estimator, params.particle_batch, params.samples), \
        f"{estimator}, N={params.particles}, m={params.samples}"


def cbo_arithmetic(estimator: str, particle_batch: int, samples: int) -> Arithmetic:
    """The arithmetic of one CBO step: `particle_batch` particles' losses on `samples` transitions each
    (the error meter's pass included)."""
    from rlstudy.bellman.numerics.compiled.qnet import ROWS_PER_PART
    from rlstudy.bellman.numerics.compiled.residuals import rows_per_sample

    arith = Arithmetic()
    rows = samples * rows_per_sample(estimator)  # [s; s^'; s'] of each particle, in parts: their shapes
    qnet_forward(arith, ROWS_PER_PART, count=particle_batch * (rows // ROWS_PER_PART))
    if rows % ROWS_PER_PART:
        qnet_forward(arith, rows % ROWS_PER_PART, count=particle_batch)
    meter_arithmetic(arith)
    arith.calls["sin+cos"] += samples * (rows_per_sample(estimator) - 2)  # features of UR's and BFF's s^'
    return arith


def mlp_arithmetic(arith: Arithmetic, sizes: list[int], rows: int, backward: bool = False,
                   parameters: bool = True, inputs: bool = False) -> None:
    """A forward pass of Linear layers of `sizes` over `rows` inputs and, with `backward`, the
    hand-written backward pass of compiled_updates._backward (each weight's gradient if `parameters`,
    the gradient of every layer's input but the first's, and the first's too if `inputs`)."""
    layers = list(zip(sizes[:-1], sizes[1:]))
    for n_in, n_out in layers:
        arith.add_gemm(rows, n_in, n_out)
    if backward:
        for i, (n_in, n_out) in enumerate(layers):
            if parameters:
                arith.add_gemm(n_out, rows, n_in)
            if i or inputs:
                arith.add_gemm(rows, n_out, n_in)


def agent_kernels(updates: int, wanted=lambda name: True):
    """(name, seconds per update, arithmetic) of DQN, DDPG, MPO, BCQ and the offline DQN as their loops
    run them: those whose names are `wanted`."""
    gen = torch.Generator().manual_seed(0)
    rows = [row(updates, gen) for name, row in (("DQN update", dqn_row), ("DDPG", ddpg_row), ("MPO", mpo_row))
            if wanted(ROW_NAMES[name])]
    return rows + offline_rows(updates, wanted)


ROW_NAMES = {"DQN update": "DQN update (CartPole, batch 128, 120-84)",
             "DDPG": "DDPG critic+actor update (Pendulum, batch 256, 256-256)",
             "MPO": "MPO update (Pendulum, batch 128, 20 actions, 128-128)"}


def batch_of(obs_dim, act, size, discrete):
    from rlstudy.agents.replay import Batch
    g = torch.Generator().manual_seed(1)
    actions = torch.randint(act, (size,), generator=g) if discrete else torch.rand(size, act, generator=g) * 2 - 1
    return Batch(torch.rand(size, obs_dim, generator=g), actions, torch.rand(size, generator=g),
                 torch.rand(size, obs_dim, generator=g), torch.zeros(size))


def dqn_row(updates: int, gen: torch.Generator):
    """DQN, CartPole (4 -> 120 -> 84 -> 2), the update of dqn.train_dqn."""
    import gymnasium as gym
    from bellman_problem import shipped  # each learner's parameters as the shipped config gives them

    from rlstudy.agents import dqn

    env = gym.make("CartPole-v1")
    p = shipped(dqn.DQNParams, "dqn", "params")
    update = dqn.TDUpdate(dqn.q_network(env, p, gen), dqn.q_network(env, p, gen), p)
    batch = batch_of(4, 2, p.batch_size, True)

    def dqn_update():
        update.gradients(batch)
        update.step()
    arith = Arithmetic()  # counted from the shapes: the products run compiled, which the profiler does not see
    sizes = [4, *p.hidden, 2]
    mlp_arithmetic(arith, sizes, p.batch_size)  # the target network on s'
    mlp_arithmetic(arith, sizes, p.batch_size, backward=True)
    return ROW_NAMES["DQN update"], Kernel(lambda: [dqn_update() for _ in range(updates)], updates), arith


def ddpg_row(updates: int, gen: torch.Generator):
    """DDPG, Pendulum (256-256), critic and actor update of ddpg.train_ddpg (actor every policy_every)."""
    import gymnasium as gym
    from bellman_problem import shipped  # each learner's parameters as the shipped config gives them

    from rlstudy.agents import ddpg

    env = gym.make("Pendulum-v1")
    p = shipped(ddpg.DDPGParams, "ddpg", "params")
    learner = ddpg.Updates(ddpg.ActorCritic(env, p, gen), ddpg.ActorCritic(env, p, gen), p)
    batch = batch_of(3, 1, p.batch_size, False)

    def ddpg_update():
        learner.critic_gradients(batch)
        learner.critic_optimiser.step()
        learner.actor_gradients(batch.observations)
        learner.actor_optimiser.step()
        learner.polyak_update()
    arith = Arithmetic()
    actor_sizes, critic_sizes = [3, *p.hidden, 1], [4, *p.hidden, 1]
    mlp_arithmetic(arith, actor_sizes, p.batch_size)  # the targets' mu'(s') and Q'(s', mu'(s'))
    mlp_arithmetic(arith, critic_sizes, p.batch_size)
    mlp_arithmetic(arith, critic_sizes, p.batch_size, backward=True)  # the critic's step
    mlp_arithmetic(arith, actor_sizes, p.batch_size, backward=True)  # the actor's, through the critic
    mlp_arithmetic(arith, critic_sizes, p.batch_size, backward=True, parameters=False, inputs=True)
    arith.calls["tanh"] += 2 * p.batch_size
    return ROW_NAMES["DDPG"], Kernel(lambda: [ddpg_update() for _ in range(updates)], updates), arith


def mpo_row(updates: int, gen: torch.Generator):
    """MPO, Pendulum (128-128, 20 action samples)."""
    import gymnasium as gym
    from bellman_problem import shipped  # each learner's parameters as the shipped config gives them

    from rlstudy.agents.mpo.config import MPOParams
    from rlstudy.agents.mpo.learner import MPO
    from rlstudy.agents.replay import ReplayBuffer

    env = gym.make("Pendulum-v1")
    p = shipped(MPOParams, "mpo")
    agent = MPO(3, 1, env.action_space.low, env.action_space.high, p, torch.device("cpu"), gen)
    replay = ReplayBuffer(2000, (3,), (1,), extras={"actions_raw": (1,), "ends": (), "behaviour_log_probs": ()})
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    for _ in range(600):
        action, raw, logp = agent.act(obs, greedy=False)
        nxt, reward, term, trunc, _ = env.step(action)
        replay.add(obs, action, reward, nxt, term, actions_raw=raw, ends=term or trunc, behaviour_log_probs=logp)
        obs = env.reset()[0] if term or trunc else nxt
    mpo_batch = replay.sample_sequences(p.batch_size, 1, rng)  # as mpo/loop.py samples without Retrace
    return (ROW_NAMES["MPO"],
            Kernel(lambda: [agent.update(mpo_batch) for _ in range(updates)], updates),
            mpo_arithmetic(p, 3, 1))


def mpo_arithmetic(p, obs_dim: int, act_dim: int) -> Arithmetic:
    """MPO's update (agents/mpo/learner.py, its passes in NumPy, which the profiler does not see),
    counted from the shapes: the target policy at s' and s, the target critic over their sampled
    actions (passes.CriticPasses.values: the first layer's product with the LayerNorm folded in, a
    bias column in each later product, the head's), the online critic's TD step and the policy's
    M-step, forward and backward. Transcendentals: the first layers' tanh, every ELU's exp (one per
    element, as expm1 computes it), the E-step's softmax exp and log."""
    arith = Arithmetic()
    rows, samples = p.batch_size, p.action_samples
    policy_sizes = [obs_dim, *p.policy_layer_sizes]
    critic_sizes = [obs_dim + act_dim, *p.critic_layer_sizes]

    def torso(sizes, count, backward=False):
        mlp_arithmetic(arith, sizes, count, backward=backward)
        arith.calls["tanh"] += count * sizes[1]
        arith.calls["exp"] += count * sum(sizes[2:])

    def policy_heads(count, backward=False):
        arith.add_gemm(count, policy_sizes[-1], act_dim, 2)
        if backward:
            arith.add_gemm(act_dim, count, policy_sizes[-1], 2)  # the heads' weight gradients
            arith.add_gemm(count, act_dim, policy_sizes[-1], 2)  # their gradients in the features

    torso(policy_sizes, 2 * rows)  # the target policy at s' and s
    policy_heads(2 * rows)
    evaluated = 2 * rows * samples
    hidden = p.critic_layer_sizes
    arith.add_gemm(2 * rows, obs_dim, hidden[0])  # the states' part of the first layer (its variance)
    arith.add_gemm(evaluated, obs_dim + act_dim + 2, hidden[0] + 1)
    for width_in, width_out in zip(hidden[:-1], hidden[1:]):
        arith.add_gemm(evaluated, width_in + 1, width_out)
    arith.add_gemm(evaluated, hidden[-1], 1)
    arith.calls["tanh"] += evaluated * (hidden[0] + 1)
    arith.calls["exp"] += evaluated * sum(hidden[1:]) + rows * samples  # ELUs, the E-step's softmax
    arith.calls["log"] += rows
    torso(critic_sizes, rows, backward=True)  # the TD step
    arith.add_gemm(rows, hidden[-1], 1)
    arith.add_gemm(1, rows, hidden[-1])
    arith.add_gemm(rows, 1, hidden[-1])
    for _ in range(p.m_steps):
        torso(policy_sizes, rows, backward=True)
        policy_heads(rows, backward=True)
    return arith


def offline_rows(updates: int, wanted) -> list:
    """BCQ and the offline DQN, CartPole (offline/bcq.py, double_dqn.py with the regular parameters)."""
    from bellman_problem import shipped

    from rlstudy.offline.bcq import BCQ
    from rlstudy.offline.double_dqn import DQN, LearnerParams
    from rlstudy.offline.envs import AtariPreprocessing, make_env
    from rlstudy.offline.training import generate_buffer
    params = shipped(LearnerParams, "offline", "regular")
    names = {name: f"{name} update (CartPole, batch {params.batch_size})" for name in ("BCQ", "offline DQN")}
    if not any(map(wanted, names.values())):
        return []
    env, info = make_env("CartPole-v1", shipped(AtariPreprocessing, "offline", "atari_preprocessing"))
    buffer, _ = generate_buffer(DQN(info, params, torch.device("cpu")), env, info, 2000, 0, np.random.default_rng(0),
                                0.2, 0.2, 0.0, "floor buffer")
    sample = buffer.sample(params.batch_size, np.random.default_rng(1))
    rows = []
    for name, learner, heads in (("BCQ", BCQ(info, params, 0.3, torch.device("cpu")), 2),
                                 ("offline DQN", DQN(info, params, torch.device("cpu")), 1)):
        if wanted(names[name]):
            kernel = Kernel(lambda learner=learner: [learner.update(sample) for _ in range(updates)], updates)
            rows.append((names[name], kernel,
                         offline_arithmetic(info.observation_shape[0], info.num_actions, params.batch_size, heads)))
    return rows


def offline_arithmetic(inputs: int, actions: int, rows: int, heads: int) -> Arithmetic:
    """An offline learner's update on the CPU (compiled, core/compiled_updates.py: the profiler does
    not see it), counted from the shapes: the online network on s' (the next action), the target on
    s', the online network on s and its backward pass; the heads are one stacked layer of the flat
    buffer (double_dqn.compiled_network), the target's too."""
    arith = Arithmetic()
    sizes = [inputs, 256, 256, heads * actions]  # offline/networks.py: the MLP torso, then the heads
    for _ in range(2):
        mlp_arithmetic(arith, sizes, rows)
    mlp_arithmetic(arith, sizes, rows, backward=True)
    if heads == 2:  # BCQ's filter on s' and its imitation log-softmax on s
        arith.calls["exp"] += 2 * rows * actions
        arith.calls["log"] += rows
    return arith


# ---- the table --------------------------------------------------------------------------------

def fmt_time(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def table(prims: Primitives, rows: list[tuple[str, Kernel, Arithmetic]]) -> str:
    lines = ["| kernel | CPU time | arithmetic | floor | floor / time |", "| --- | ---: | --- | ---: | ---: |"]
    for name, kernel, arith in rows:
        seconds, floor = kernel.best, arith.floor(prims)
        lines.append(f"| {name} | {fmt_time(seconds)} | {arith.describe()} | {fmt_time(floor)} | {floor / seconds:.0%} |")
    lines += ["", "Best measured rates of the primitives (one thread, float32, a 20000 x 50 block):", ""]
    for name, rates in prims.rates.items():
        rate, winner = prims.best_rate(name)
        others = ", ".join(f"{impl} {r / 1e9:.2f}" for impl, r in rates.items())
        lines.append(f"- {name}: **{rate / 1e9:.2f} G/s** ({winner}; {others} G/s)")
    big = sorted(prims.gemm_times, key=lambda shape: -shape[0] * shape[1] * shape[2])[:6]
    shapes = "; ".join(f"{m}x{k} @ {k}x{n}: {2 * m * k * n / t / 1e9:.0f} GFLOP/s ({impl})"
                       for (m, k, n), (t, impl) in ((shape, prims.fastest(shape)) for shape in big))
    lines.append(f"- matrix products, the largest shapes used: {shapes}")
    if prims.unpinned_kernels is not None:
        pin = ", ".join(f"{name}={os.environ[name]}" for name in KERNEL_PIN if name in os.environ)
        lines.append(f"- this machine's environment pins OpenBLAS's kernels ({pin}), and the kernels timed above run "
                     f"under that pin, as the workflow's jobs do; NumPy's products were also timed without it, "
                     f"under OpenBLAS's own choice ({prims.unpinned_kernels}), and count where faster")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", action="store_true", help=f"write the table into {DOC.relative_to(ROOT)}")
    p.add_argument("--quick", action="store_true", help="fewer repeats and steps (a smoke test of this script)")
    p.add_argument("--only", nargs="+", metavar="SUBSTRING",
                   help="time only the kernels whose names hold one of these (not with --write)")
    p.add_argument("--numpy-gemms", help=argparse.SUPPRESS)  # the child of time_unpinned_gemms: shapes as JSON
    p.add_argument("--repeats", type=int, default=5, help=argparse.SUPPRESS)
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.numpy_gemms:
        from rlstudy.core.process import openblas_kernels
        shapes = [tuple(shape) for shape in json.loads(args.numpy_gemms)]
        print(json.dumps({"kernels": openblas_kernels(),
                          "times": [[shape, gemm_times(*shape, args.repeats)[1]] for shape in shapes]}))
        return
    if args.write and args.only:
        p.error("--write writes the whole table: not with --only")

    def wanted(name: str) -> bool:
        return not args.only or any(part in name for part in args.only)
    load_before = os.getloadavg()[0]
    repeats = 2 if args.quick else ROUNDS
    prims = Primitives(repeats)
    rows = []
    for estimator in ("DS", "UR", "BFF"):
        name = f"SGD mini-batch, {estimator}, batch 10000 (train_sgd, with the error meter)"
        if wanted(name):
            rows.append((name, *sgd_kernel(estimator, 10_000, 2 if args.quick else 8)))
    for setting, label, steps in (("cbo", "notebook", 1 if args.quick else 3),
                                  ("cbo-adaptive", "cbo-adaptive", 5 if args.quick else 40)):
        if wanted(f"CBO step, {label}"):
            kernel, arith, what = cbo_kernel(setting, steps)
            rows.append((f"CBO step, {label} ({what}; train_cbo)", kernel, arith))
    rows += agent_kernels(5 if args.quick else 50, wanted)
    shapes = {shape for _, _, arith in rows for shape in arith.gemms}
    for _, kernel, _ in rows:
        kernel.fn()  # a warm-up call: loads its compiled code and fills its caches
    # Rounds rather than each kernel's calls in a row: this machine's speed drifted by a third within
    # minutes (2026-11-29), and a kernel timed in a fast minute against primitives timed in a slow one
    # read 108-113 % of its floor (or half its ratio the other way). Each least time now comes from the same rounds.
    for _ in range(repeats):
        for _, kernel, _ in rows:
            kernel.time_once()
        prims.measure(shapes)
    prims.time_unpinned_gemms(shapes)
    text = (f"Generated by `python benchmarks/floor.py --write` at commit {commit()}, {now()}, on {machine()}, "
            f"one thread ({load_note(load_before, os.getloadavg()[0])}).\n\n" + table(prims, rows))
    print(text)
    if args.write:
        write_block("floor", "floor.py", text)
        print(f"\nwritten into {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
