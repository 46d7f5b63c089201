"""How close one CBO step (and one SGD step) comes to this machine's floor.

The step is compute-bound: per particle, two cosine layers over every input row and three small
matmuls. The floor is (cosines / measured cosine rate) + (flops / measured matmul rate), the
cosine rate being that of trig.cos (the compiled kernel qnet uses on the CPU); PyTorch's own
cosine is timed beside it. benchmarks/floor.py is the fuller account (every kernel, every primitive). Also times the alternative the loop was chosen over: one batched
matmul over all particles.

    python benchmarks/cbo_step.py [--particles 100 --samples 10000 --estimator UR]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from rlstudy.bellman.numerics.compiled.backend import particle_losses, sgd_direction
from rlstudy.bellman.numerics.compiled import trig
from rlstudy.bellman.numerics.compiled.qnet import SHAPE, init_params, unflatten
from rlstudy.bellman.numerics.compiled.residuals import TrajectoryTensors, make_batch, residual_pair
from rlstudy.bellman.problem.sde import sample_trajectory

from bellman_problem import DYNAMICS


def best_time(fn, repeats=5):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def machine_rates(rows: int) -> tuple[float, float, float]:
    """Cosines per second of trig.cos and of torch.cos, float32; matmul flops per second."""
    x = torch.randn(rows, SHAPE.hidden)
    out = torch.empty_like(x)
    cos_rate = x.numel() / best_time(lambda: trig.cos(x.numpy()), 20)
    torch_cos_rate = x.numel() / best_time(lambda: torch.cos(x, out=out), 20)
    a, b = torch.randn(rows, SHAPE.hidden), torch.randn(SHAPE.hidden, SHAPE.hidden)
    gemm_rate = 2 * rows * SHAPE.hidden ** 2 / best_time(lambda: a @ b, 20)
    return cos_rate, torch_cos_rate, gemm_rate


def batched_losses(particles, batch, gamma):
    """All particles in one baddbmm chain (the alternative to the loop in numerics/compiled/backend.py's particle_losses)."""
    feats = torch.cat([batch.feats] + ([batch.next_feats] if batch.next_feats is not None else []))
    layers = [unflatten(theta) for theta in particles]
    h = feats.expand(len(particles), *feats.shape)
    for i in range(3):
        w = torch.stack([layer[i][0] for layer in layers]).transpose(1, 2)
        b = torch.stack([layer[i][1] for layer in layers]).unsqueeze(1)
        h = torch.baddbmm(b, h, w)
        if i < 2:
            h = h.cos_()
    m = len(batch.action_indices)
    from rlstudy.bellman.numerics.loss import bellman_loss
    return torch.stack([bellman_loss(*residual_pair(q[:2 * m], q[2 * m:] if batch.next_feats is not None else None,
                                                batch, gamma)) for q in h])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--particles", type=int, default=100)
    p.add_argument("--samples", type=int, default=10_000)
    p.add_argument("--estimator", default="UR", choices=["DS", "UR", "BFF"])
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    dyn = DYNAMICS
    traj = sample_trajectory("uniform", 1_000_000, dyn, np.random.default_rng(0))
    traj = TrajectoryTensors.from_arrays(traj.states, traj.action_indices, traj.rewards)
    g = torch.Generator().manual_seed(0)
    batch = make_batch(traj, torch.randint(999_000, (args.samples,), generator=g), args.estimator, "control", dyn, g)
    rows = batch.feats.shape[0] + (0 if batch.next_feats is None else batch.next_feats.shape[0])
    cos_rate, torch_cos_rate, gemm_rate = machine_rates(rows)
    print(f"machine ({args.threads} thread): float32 cosine {cos_rate / 1e9:.2f} G/s (trig.cos; "
          f"torch.cos {torch_cos_rate / 1e9:.2f} G/s), "
          f"matmul ({rows}x50 @ 50x50) {gemm_rate / 1e9:.1f} GFLOP/s")

    particles = init_params(args.particles, g)
    with torch.no_grad():
        step = best_time(lambda: particle_losses(particles, batch, 0.9), 3)
    cosines = args.particles * rows * 2 * SHAPE.hidden
    flops = args.particles * rows * 2 * sum(i * o for i, o in SHAPE.layers)
    floor = cosines / cos_rate + flops / gemm_rate
    print(f"CBO step, {args.estimator}, N={args.particles}, m={args.samples}: {step:.3f} s; floor {floor:.3f} s "
          f"({cosines / 1e6:.0f} M cosines, {flops / 1e9:.2f} GFLOP): {floor / step:.0%} of the machine's rate")
    if args.particles * rows * SHAPE.hidden * 4 < 4e9:
        with torch.no_grad():
            batched = best_time(lambda: batched_losses(particles, batch, 0.9), 2)
        print(f"  the same step as one batched matmul over all particles: {batched:.3f} s "
              f"({batched / step:.1f}x the loop)")

    theta = particles[0]

    sgd = best_time(lambda: sgd_direction(theta, batch, 0.9), 10)
    grad_rows = batch.feats.shape[0]
    # forward + backward: cos and sin of both layers on the gradient rows, cos on the others.
    transcendentals = (2 * grad_rows + (rows - grad_rows)) * 2 * SHAPE.hidden
    sgd_floor = transcendentals / cos_rate + 3 * grad_rows * 2 * sum(i * o for i, o in SHAPE.layers) / gemm_rate
    print(f"SGD step, {args.estimator}, batch {args.samples}: {sgd * 1e3:.1f} ms; floor {sgd_floor * 1e3:.1f} ms: "
          f"{sgd_floor / sgd:.0%}")


if __name__ == "__main__":
    main()
